import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { testFeedDeployer, type TestFeedDeployer } from '../../../test/support/price-feeds.ts';
import { ManualClock } from '../../core/clock.ts';
import { devnetRpcUrls } from '../../devnet/devnet.ts';
import { createViemChainPort } from '../chain/viem.ts';
import { createChainlinkPriceReferences } from './chainlink.ts';
import type { PriceFeedSpec, PriceResult } from './port.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet), retryCount: 0 });
let feeds: TestFeedDeployer;

beforeAll(async () => {
  feeds = await testFeedDeployer(devnet, CHAIN);
});

/** An adapter whose clock stands at the chain's current time. */
async function adapterAtChainTime() {
  const clock = new ManualClock(new Date(Number(await feeds.chainTime()) * 1000));
  return { clock, port: createChainlinkPriceReferences({ chain, clock, marginSeconds: 60 }) };
}

const spec = (address: `0x${string}`, extra: Partial<PriceFeedSpec> = {}): PriceFeedSpec => ({
  chainId: CHAIN,
  pair: 'ETH/USD',
  address,
  heartbeatSeconds: 1200,
  decimals: 8,
  ...extra,
});

const failureKind = (r: PriceResult) => (r.ok ? 'ok' : r.failure.kind);

describe('Chainlink price references', () => {
  it('reads a fresh round: answer, decimals, updatedAt and round id', async () => {
    const feed = await feeds.deploy('ETH / USD', 3000_00000000n);
    const { port } = await adapterAtChainTime();
    const result = await port.read(spec(feed.address));
    expect(
      result.ok,
      JSON.stringify(result, (_, v: unknown) => (typeof v === 'bigint' ? `${v}` : v)),
    ).toBe(true);
    if (!result.ok) return;
    expect(result.reading).toMatchObject({
      answer: 3000_00000000n,
      decimals: 8,
      roundId: 1n,
      pair: 'ETH/USD',
    });
    expect(result.reading.updatedAt).toBeLessThanOrEqual(await feeds.chainTime());
    await feed.setAnswer(3100_00000000n);
    const next = await port.read(spec(feed.address));
    expect(next.ok && [next.reading.answer, next.reading.roundId]).toEqual([3100_00000000n, 2n]);
  });

  it('refuses a round older than heartbeat + margin, to the second', async () => {
    const feed = await feeds.deploy('ETH/USD', 3000_00000000n);
    const { port, clock } = await adapterAtChainTime();
    const now = BigInt(clock.now().getTime() / 1000);
    await feed.setRound(3000_00000000n, now - 1260n);
    expect(failureKind(await port.read(spec(feed.address)))).toBe('ok');
    await feed.setRound(3000_00000000n, now - 1261n);
    const stale = await port.read(spec(feed.address));
    expect(failureKind(stale)).toBe('stale');
    expect(!stale.ok && stale.failure.message).toContain('1261 s ago');
    await feed.setRound(3000_00000000n, 0n);
    expect(failureKind(await port.read(spec(feed.address)))).toBe('stale');
  });

  it('refuses zero and negative answers', async () => {
    const feed = await feeds.deploy('ETH/USD', 0n);
    const { port } = await adapterAtChainTime();
    expect(failureKind(await port.read(spec(feed.address)))).toBe('bad_answer');
    await feed.setAnswer(-5n);
    const negative = await port.read(spec(feed.address));
    expect(failureKind(negative)).toBe('bad_answer');
    expect(!negative.ok && negative.failure.message).toContain('-5');
  });

  it('refuses an address without code', async () => {
    const { port } = await adapterAtChainTime();
    const empty = privateKeyToAccount(generatePrivateKey()).address;
    expect(failureKind(await port.read(spec(empty)))).toBe('no_code');
  });

  it('refuses a feed whose description or decimals differ from the configuration, and keeps refusing', async () => {
    const btc = await feeds.deploy('BTC / USD', 60000_00000000n);
    const { port } = await adapterAtChainTime();
    const mismatch = await port.read(spec(btc.address));
    expect(failureKind(mismatch)).toBe('description_mismatch');
    expect(!mismatch.ok && mismatch.failure.message).toContain('BTC / USD');
    expect(failureKind(await port.read(spec(btc.address)))).toBe('description_mismatch');
    // The same feed configured as what it is passes.
    expect(failureKind(await port.read(spec(btc.address, { pair: 'BTC/USD' })))).toBe('ok');

    const eth18 = await feeds.deploy('ETH/USD', 3000n * 10n ** 18n, 18);
    expect(failureKind(await port.read(spec(eth18.address)))).toBe('description_mismatch');
  });

  it('refuses a contract that does not speak the feed interface', async () => {
    const { port } = await adapterAtChainTime();
    const weth = devnet.chains[CHAIN]!.contracts.weth;
    expect(failureKind(await port.read(spec(weth)))).toBe('reverted');
  });

  it('reports an unreachable RPC endpoint and a chain without one', async () => {
    const feed = await feeds.deploy('ETH/USD', 3000_00000000n);
    const down = createViemChainPort({ rpcUrls: { [CHAIN]: 'http://127.0.0.1:9' }, retryCount: 0 });
    const port = createChainlinkPriceReferences({ chain: down, clock: new ManualClock() });
    expect(failureKind(await port.read(spec(feed.address)))).toBe('unreachable');
    expect(failureKind(await port.read(spec(feed.address, { chainId: 1 })))).toBe('missing_feed');
  });

  it('refuses every feed of a chain while its sequencer is down and for the grace period after', async () => {
    const feed = await feeds.deploy('ETH/USD', 3000_00000000n);
    const sequencer = await feeds.deploy('L2 Sequencer Uptime Status Feed', 0n, 0);
    const clock = new ManualClock(new Date(Number(await feeds.chainTime()) * 1000));
    const now = BigInt(clock.now().getTime() / 1000);
    const port = createChainlinkPriceReferences({
      chain,
      clock,
      sequencers: { [CHAIN]: sequencer.address },
      sequencerGraceSeconds: 3600,
    });
    // Deployed just now: up, but inside the grace period.
    const recent = await port.read(spec(feed.address));
    expect(failureKind(recent)).toBe('sequencer_down');
    expect(!recent.ok && recent.failure.message).toContain('came back up');
    await sequencer.setRound(0n, now - 3600n);
    expect(failureKind(await port.read(spec(feed.address)))).toBe('ok');
    await sequencer.setRound(1n, now - 7200n);
    const down = await port.read(spec(feed.address));
    expect(!down.ok && down.failure.message).toContain('sequencer is down');
    const unreadable = createChainlinkPriceReferences({
      chain,
      clock,
      sequencers: { [CHAIN]: privateKeyToAccount(generatePrivateKey()).address },
    });
    expect(failureKind(await unreadable.read(spec(feed.address)))).toBe('sequencer_down');
  });
});
