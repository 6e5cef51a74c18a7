// Holdings and reconciliation on the devnet, read with viem: after a deposit, concurrent conversions
// and an outside transfer, the holdings read shows the chain's figures and the books', equal, the
// native coin of the Kernel account included (balance plus EntryPoint deposit); a balance changed
// behind the watcher's back (anvil_setStorageAt) is suspected, then raised as `ledger.drift` by
// webhook, listed for the account and the operator, and an operator's adjustment with a reason
// clears it, audited.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeAbiParameters, erc20Abi, getAddress, keccak256, toHex, type Address } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { watchConfig } from '../../../test/support/chain-watch.ts';
import {
  conversionAgent,
  eurcMarket,
  giveToken,
  runToEnd,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import { keyringOf } from '../../core/sealing.ts';
import { testConfig } from '../../config.ts';
import { type Clock } from '../../core/clock.ts';
import type { Intent } from '../intents/index.ts';
import { createWebhookDispatcher } from '../webhooks/index.ts';
import { reconcileChain, watchChain, type DriftView, type WatchDeps } from './index.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const USD = 1_000_000n;
const OPERATOR_TOKEN = 'op_'.padEnd(40, 'r');
let m: EurcMarket;

beforeAll(async () => {
  const config = testConfig();
  m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }], {
    config: {
      planner: { ...config.planner, sliceIntervalMs: 100 },
      executor: { ...config.executor, receiptPollMs: 50 },
      chainWatch: watchConfig(),
      operatorToken: OPERATOR_TOKEN,
    },
  });
});
afterAll(async () => {
  await m?.t.close();
});

function deps(overrides: { clock?: Clock; graceMs?: number } = {}): WatchDeps {
  const t = m.t;
  return {
    db: t.db.db,
    clock: overrides.clock ?? t.deps.clock,
    chain: t.deps.chain!,
    registry: t.deps.tokenRegistry!,
    config: {
      ...t.deps.config,
      chainWatch: { ...t.deps.config.chainWatch, graceMs: overrides.graceMs ?? 0 },
    },
  };
}

const client = () => m.t.deps.chain!.publicClient(CHAIN);
const tokenHeld = (token: Address, holder: Address) =>
  client().readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
const nativeHeld = async (holder: Address) =>
  (await client().getBalance({ address: holder })) +
  (await client().readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'balanceOf',
    args: [holder],
  }));

interface Holdings {
  chains: {
    chain_id: number;
    block: string;
    watched_through: string | null;
    holdings: { asset: string; symbol: string | null; ledger: string; chain: string; unconfirmed: string }[];
  }[];
}

/** A webhook receiver on loopback: the events it was sent. */
async function receiver() {
  const received: { kind: string; data: Record<string, unknown> }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { kind: string; data: Record<string, unknown> };
      received.push({ kind: body.kind, data: body.data });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('holdings and reconciliation', () => {
  it('shows books equal to the chain after a deposit, concurrent conversions and an outside transfer; raises and clears a drift', async () => {
    const t = m.t;
    const a = await conversionAgent(devnet, m, 0n, { deploy: true });
    const account = getAddress(a.account);
    const auth = { authorization: `Bearer ${a.sessionToken}` };
    await watchChain(deps(), CHAIN);

    // A deposit, then three conversions of one wallet at once.
    await giveToken(m.market, m.usdc, account, 500n * USD);
    await watchChain(deps(), CHAIN);
    const intents = await Promise.all(
      [1, 2, 3].map(() => a.api<Intent>('POST', '/v1/intents', sellUsdc(m, a.wallet, 20n * USD))),
    );
    const ends = await Promise.all(intents.map((intent) => runToEnd(t, intent.id)));
    expect(ends).toEqual(intents.map(() => ({ status: 'filled' })));
    // An outside transfer in.
    await giveToken(m.market, m.eurc, account, 7n * USD);
    const watched = await watchChain(deps(), CHAIN);
    expect(watched.booked).toBe(1);

    const read = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/wallets/${a.wallet}/balances?chain_id=${CHAIN}`,
      headers: auth,
    });
    expect(read.statusCode, read.body).toBe(200);
    const base = read.json<Holdings>().chains[0]!;
    expect(base.chain_id).toBe(CHAIN);
    // The watcher passed every block this wallet's transfers are in; another file on the shared
    // devnet may mine more before the read, which touch other wallets only.
    expect(BigInt(base.watched_through!)).toBeGreaterThan(0n);
    expect(BigInt(base.watched_through!)).toBeLessThanOrEqual(BigInt(base.block));
    const figure = (asset: string) => base.holdings.find((h) => h.asset === asset)!;
    const usdc = figure(`eip155:${CHAIN}/erc20:${m.usdc.address.toLowerCase()}`);
    const eurc = figure(`eip155:${CHAIN}/erc20:${m.eurc.address.toLowerCase()}`);
    const native = figure(`eip155:${CHAIN}/slip44:60`);
    expect(usdc).toMatchObject({ ledger: usdc.chain, unconfirmed: '0' });
    expect(BigInt(usdc.chain)).toBe(await tokenHeld(m.usdc.address, account));
    expect(BigInt(usdc.chain)).toBe(440n * USD);
    expect(eurc.ledger).toBe(eurc.chain);
    expect(BigInt(eurc.chain)).toBe(await tokenHeld(m.eurc.address, account));
    // The Kernel account's native coin: its balance plus its EntryPoint deposit, after the gas of
    // three concurrent operations and the relayer's prefund deposits.
    expect(native.symbol).toBe('ETH');
    expect(native.ledger).toBe(native.chain);
    expect(BigInt(native.chain)).toBe(await nativeHeld(account));

    // Reconciliation agrees: nothing suspected.
    const agreed = await reconcileChain(deps(), CHAIN);
    expect(agreed).toMatchObject({ suspected: 0, raised: 0 });

    // The account's webhook endpoint.
    const hooks = await receiver();
    try {
      const put = await t.app.fastify.inject({
        method: 'PUT',
        url: '/v1/webhooks/endpoint',
        headers: auth,
        payload: { url: hooks.url },
      });
      expect(put.statusCode, put.body).toBe(200);

      // EURC changed behind the watcher's back: 5 more in the token's balance slot (mapping at slot 3).
      const held = await tokenHeld(m.eurc.address, account);
      const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [account, 3n]));
      await client().request({
        method: 'anvil_setStorageAt' as never,
        params: [m.eurc.address, slot, toHex(held + 5n * USD, { size: 32 })] as never,
      });
      // In a block of its own, as a chain's changes are: reads pinned to a block number see it.
      await client().request({ method: 'evm_mine' as never, params: [] as never });
      await watchChain(deps(), CHAIN);
      // Suspected first (it may be a receipt not booked yet), raised when still there after the grace.
      const first = await reconcileChain(deps({ graceMs: 60_000 }), CHAIN);
      expect(first).toMatchObject({ suspected: 1, raised: 0 });
      const later: Clock = { now: () => new Date(Date.now() + 61_000) };
      const second = await reconcileChain(deps({ clock: later, graceMs: 60_000 }), CHAIN);
      expect(second).toMatchObject({ raised: 1 });

      // The dispatcher runs at the time the drift was raised (a minute on).
      const dispatcher = createWebhookDispatcher({
        db: t.db.db,
        clock: later,
        log: t.deps.log,
        keyring: keyringOf(t.deps.config.sealingKeys),
        production: false,
      });
      await dispatcher.drain();
      const drift = hooks.received.find((e) => e.kind === 'ledger.drift');
      expect(drift?.data).toMatchObject({
        wallet: a.wallet,
        asset: `eip155:${CHAIN}/erc20:${m.eurc.address.toLowerCase()}`,
        ledger: held.toString(),
        chain: (held + 5n * USD).toString(),
        difference: (5n * USD).toString(),
        state: 'open',
      });
      expect(BigInt(drift!.data['block'] as string)).toBeGreaterThan(0n);

      // Listed for the account and for the operator.
      const listed = await t.app.fastify.inject({ method: 'GET', url: '/v1/ledger/drifts', headers: auth });
      const drifts = listed.json<{ drifts: DriftView[] }>().drifts;
      expect(drifts).toHaveLength(1);
      const id = drifts[0]!.id;
      const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
      const opsList = await t.app.fastify.inject({ method: 'GET', url: '/v1/ops/drifts', headers: operator });
      expect(opsList.json<{ drifts: DriftView[] }>().drifts.map((d) => d.id)).toContain(id);

      // The operator books an explained adjustment; it is audited and the drift is resolved.
      const refused = await t.app.fastify.inject({
        method: 'POST',
        url: `/v1/ops/drifts/${id}/adjust`,
        headers: operator,
        payload: {},
      });
      expect(refused.statusCode).toBe(400);
      const adjusted = await t.app.fastify.inject({
        method: 'POST',
        url: `/v1/ops/drifts/${id}/adjust`,
        headers: operator,
        payload: { reason: 'Issuer credited the wallet off the books' },
      });
      expect(adjusted.statusCode, adjusted.body).toBe(200);
      expect(adjusted.json()).toMatchObject({ state: 'resolved', resolution: 'adjusted' });
      const again = await t.app.fastify.inject({
        method: 'POST',
        url: `/v1/ops/drifts/${id}/adjust`,
        headers: operator,
        payload: { reason: 'twice' },
      });
      expect(again.statusCode).toBe(409);
      const audit = await t.db.db
        .selectFrom('audit_log')
        .select(['action', 'actor', 'details'])
        .where('subject', '=', id)
        .execute();
      expect(audit).toEqual([
        expect.objectContaining({
          action: 'ledger.adjusted',
          actor: 'operator',
          details: expect.objectContaining({
            reason: 'Issuer credited the wallet off the books',
            amount: '5000000',
          }),
        }),
      ]);
      expect((await reconcileChain(deps(), CHAIN)).suspected).toBe(0);
      const open = await t.app.fastify.inject({ method: 'GET', url: '/v1/ledger/drifts', headers: auth });
      expect(open.json<{ drifts: DriftView[] }>().drifts).toEqual([]);
      const after = await t.app.fastify.inject({
        method: 'GET',
        url: `/v1/wallets/${a.wallet}/balances?chain_id=${CHAIN}`,
        headers: auth,
      });
      const eurcAfter = after
        .json<Holdings>()
        .chains[0]!.holdings.find(
          (h) => h.asset === `eip155:${CHAIN}/erc20:${m.eurc.address.toLowerCase()}`,
        )!;
      expect(eurcAfter.ledger).toBe(eurcAfter.chain);
      await dispatcher.drain();
      expect(hooks.received.map((e) => e.kind)).toContain('ledger.drift_resolved');
    } finally {
      await hooks.close();
    }

    // Another account's wallet, or one not watched, is 404.
    const other = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/wallets/0x${'ab'.repeat(20)}/balances`,
      headers: auth,
    });
    expect(other.statusCode).toBe(404);
  });
});
