import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEther, parseUnits, type Address } from 'viem';
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { testFeedDeployer, type TestFeedDeployer } from '../../../test/support/price-feeds.ts';
import { createChainlinkPriceReferences } from '../../adapters/prices/chainlink.ts';
import type { PriceFeedSpec } from '../../adapters/prices/port.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { ManualClock } from '../../core/clock.ts';
import { devnetTokenAddresses, devnetToken } from '../../devnet/devnet.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import { applyCrossPrice, createPriceReferences } from './index.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const registry = buildTokenRegistry('development', devnetTokenAddresses(devnet));
const weth = devnetToken(devnet, CHAIN, 'WETH').address;
const usdc = devnetToken(devnet, CHAIN, 'USDC').address;
let deployer: TestFeedDeployer;
const stops: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  deployer = await testFeedDeployer(devnet, CHAIN);
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A loopback relay to the devnet chain that counts JSON-RPC requests and can be shut. */
async function relay(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  const target = devnet.chains[CHAIN]!.rpcUrl;
  let count = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      count += 1;
      fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      })
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(await answer.text());
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  stops.push(close);
  return { url: `http://127.0.0.1:${port}`, requests: () => count, close };
}

/** Price references over our own feeds, with a clock standing at the chain's time. */
async function references(feeds: Record<string, Address>, rpcUrl = devnet.chains[CHAIN]!.rpcUrl) {
  const clock = new ManualClock(new Date(Number(await deployer.chainTime()) * 1000));
  const chain = createViemChainPort({ rpcUrls: { [CHAIN]: rpcUrl }, retryCount: 0 });
  const specs: PriceFeedSpec[] = Object.entries(feeds).map(([pair, address]) => ({
    chainId: CHAIN,
    pair,
    address,
    heartbeatSeconds: pair === 'ETH/USD' ? 1200 : 86400,
    decimals: 8,
  }));
  const prices = createPriceReferences({
    port: createChainlinkPriceReferences({ chain, clock, marginSeconds: 60 }),
    feeds: specs,
    registry,
    clock,
    marginSeconds: 60,
    refreshIntervalMs: 50,
  });
  return { prices, clock };
}

describe('price references', () => {
  it('values WETH through ETH/USD and EURC through EURC/USD, and a USD stable 1:1 without a feed', async () => {
    const eth = await deployer.deploy('ETH / USD', 3000_00000000n);
    const eurc = await deployer.deploy('EURC / USD', 1_08000000n);
    const { prices } = await references({ 'ETH/USD': eth.address, 'EURC/USD': eurc.address });
    expect(prices.valueUsdMicro(CHAIN, 'WETH', parseEther('2'))).toMatchObject({ ok: false });
    const summary = await prices.refresh();
    expect(summary).toEqual({ usable: 2, failures: [] });

    const twoEth = prices.valueUsdMicro(CHAIN, weth, parseEther('2'));
    expect(twoEth.ok && twoEth.usdMicro).toBe(6000_000000n);
    expect(twoEth.ok && twoEth.reading?.address).toBe(eth.address);
    const euros = prices.valueUsdMicro(CHAIN, 'eurc', parseUnits('100', 6));
    expect(euros.ok && euros.usdMicro).toBe(108_000000n);
    // No USDC/USD feed is configured here: USDC is valued at its peg.
    const dollars = prices.valueUsdMicro(CHAIN, usdc, 12_345678n);
    expect(dollars).toEqual({ ok: true, usdMicro: 12_345678n, reading: null });
    // A part of a micro-USD rounds up: one wei of ETH is worth something.
    const wei = prices.valueUsdMicro(CHAIN, 'WETH', 1n);
    expect(wei.ok && wei.usdMicro).toBe(1n);
  });

  it('refuses what it cannot value, saying why', async () => {
    const { prices } = await references({});
    await prices.refresh();
    const noFeed = prices.valueUsdMicro(CHAIN, 'WETH', 1n);
    expect(!noFeed.ok && noFeed.refusal).toMatchObject({ kind: 'missing_feed', pair: 'ETH/USD' });
    const unknown = prices.valueUsdMicro(CHAIN, 'DOGE', 1n);
    expect(!unknown.ok && unknown.refusal.kind).toBe('unknown_token');
    const cross = prices.crossPrice(CHAIN, 'USDC', 'WETH');
    expect(!cross.ok && cross.refusal).toMatchObject({ kind: 'missing_feed', pair: 'ETH/USD' });
  });

  it('prices WETH→USDC exactly, to the base unit', async () => {
    const eth = await deployer.deploy('ETH/USD', 3123_45678901n);
    const { prices } = await references({ 'ETH/USD': eth.address });
    await prices.refresh();
    const result = prices.crossPrice(CHAIN, 'WETH', 'USDC');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    // 3123.45678901 USD per 10^18 wei, 1 USD per 10^6 USDC units: 312345678901 / 10^20 units per wei.
    expect([result.price.num, result.price.den]).toEqual([312345678901n, 10n ** 20n]);
    // 0.123456789012345678 WETH × 3123.45678901 = 385.611945789986… USDC.
    expect(applyCrossPrice(result.price, 123456789012345678n)).toBe(385_611945n);
    expect(result.price.sellReading?.answer).toBe(3123_45678901n);
    expect(result.price.buyReading).toBeNull();
    // And the reverse: 1000 USDC buys 0.320158… WETH.
    const back = prices.crossPrice(CHAIN, 'USDC', 'WETH');
    expect(back.ok && applyCrossPrice(back.price, 1000_000000n)).toBe(320158102880929088n);
  });

  it('prices WETH→EURC through both feeds, and only while both legs are usable', async () => {
    const eth = await deployer.deploy('ETH/USD', 3000_00000000n);
    const eurc = await deployer.deploy('EURC/USD', 1_08000000n);
    const { prices } = await references({ 'ETH/USD': eth.address, 'EURC/USD': eurc.address });
    await prices.refresh();
    const result = prices.crossPrice(CHAIN, 'WETH', 'EURC');
    // 3000 / 1.08 = 2777.777… EURC per WETH.
    expect(result.ok && applyCrossPrice(result.price, parseEther('1'))).toBe(2777_777777n);
    await eurc.setAnswer(0n);
    await prices.refresh();
    const uncovered = prices.crossPrice(CHAIN, 'WETH', 'EURC');
    expect(!uncovered.ok && uncovered.refusal).toMatchObject({ kind: 'bad_answer', pair: 'EURC/USD' });
    expect(prices.valueUsdMicro(CHAIN, 'WETH', 1n).ok).toBe(true);
  });

  it('serves from the cache with no RPC, through an outage, until the reading ages past heartbeat + margin', async () => {
    const eth = await deployer.deploy('ETH/USD', 2500_00000000n);
    const rpc = await relay();
    const { prices, clock } = await references({ 'ETH/USD': eth.address }, rpc.url);
    await prices.refresh();
    const afterRefresh = rpc.requests();
    expect(afterRefresh).toBeGreaterThan(0);
    for (let i = 0; i < 100; i++) expect(prices.valueUsdMicro(CHAIN, 'WETH', parseEther('1')).ok).toBe(true);
    expect(rpc.requests()).toBe(afterRefresh);

    await rpc.close();
    const summary = await prices.refresh();
    expect(summary.failures.map((f) => f.kind)).toEqual(['unreachable']);
    const during = prices.valueUsdMicro(CHAIN, 'WETH', parseEther('1'));
    expect(during.ok && during.usdMicro).toBe(2500_000000n);

    const updatedAt = during.ok ? Number(during.reading?.updatedAt) : 0;
    clock.set(new Date((updatedAt + 1260) * 1000));
    expect(prices.valueUsdMicro(CHAIN, 'WETH', 1n).ok).toBe(true);
    clock.set(new Date((updatedAt + 1261) * 1000));
    const aged = prices.valueUsdMicro(CHAIN, 'WETH', 1n);
    expect(!aged.ok && aged.refusal.kind).toBe('stale');
    expect(!aged.ok && aged.refusal.message).toContain('has not answered since');
  });

  it('drops a cached reading when the feed goes stale or bad on chain', async () => {
    const eth = await deployer.deploy('ETH/USD', 3000_00000000n);
    const { prices, clock } = await references({ 'ETH/USD': eth.address });
    await prices.refresh();
    expect(prices.valueUsdMicro(CHAIN, 'WETH', 1n).ok).toBe(true);
    await eth.setRound(3000_00000000n, BigInt(clock.now().getTime() / 1000) - 5000n);
    await prices.refresh();
    const stale = prices.valueUsdMicro(CHAIN, 'WETH', 1n);
    expect(!stale.ok && stale.refusal.kind).toBe('stale');
  });

  it('refreshes on a timer started and stopped by its owner', async () => {
    const eth = await deployer.deploy('ETH/USD', 3000_00000000n);
    const { prices } = await references({ 'ETH/USD': eth.address });
    const stop = prices.start();
    stops.push(stop);
    await vi.waitFor(() => expect(prices.reading(CHAIN, 'ETH/USD').ok).toBe(true));
    await eth.setAnswer(3300_00000000n);
    await vi.waitFor(() => {
      const value = prices.valueUsdMicro(CHAIN, 'WETH', parseEther('1'));
      expect(value.ok && value.usdMicro).toBe(3300_000000n);
    });
    await stop();
    await eth.setAnswer(3600_00000000n);
    await new Promise((r) => setTimeout(r, 200));
    const value = prices.valueUsdMicro(CHAIN, 'WETH', parseEther('1'));
    expect(value.ok && value.usdMicro).toBe(3300_000000n);
  });
});
