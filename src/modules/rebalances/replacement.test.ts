// A burn left unconfirmed because the chain's base fee rose past what it was signed with: after
// REBALANCE_REPLACE_AFTER_MS the executor signs the same transactions again on the same nonces with
// higher fees, and exactly one attempt of each nonce lands. On a devnet of its own (its Base chain
// mines only when told to, which the shared devnet's users could not bear).

import { parseTransaction, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BASE,
  POLYGON,
  rebalanceWorld,
  USDC,
  type RebalanceWorld,
} from '../../../test/support/rebalances.ts';
import { startDevnet, type Devnet } from '../../devnet/devnet.ts';
import { rebalanceRunDeps, runBurn, type Rebalance } from './index.ts';

let devnet: Devnet;
let w: RebalanceWorld;

beforeAll(async () => {
  devnet = await startDevnet({ chainIds: [BASE, POLYGON], basePort: 0 });
  w = await rebalanceWorld(devnet.info(), { cctp: { replaceAfterMs: 1_000, receiptTimeoutMs: 300 } });
}, 180_000);
afterAll(async () => {
  await w?.close();
  await devnet?.stop();
});

const base = () => w.t.deps.chain!.publicClient(BASE);
const rpc = (method: string, params: unknown[]) =>
  base().request({ method: method as never, params: params as never });

describe('an executor transaction the chain leaves unconfirmed', () => {
  it('is replaced with higher fees on the same nonce; the burn lands once and the rebalance completes', async () => {
    const base0 = await w.t.deps.chain!.erc20Balance(BASE, w.usdc[BASE]!, w.executor.address);
    const polygon0 = await w.t.deps.chain!.erc20Balance(POLYGON, w.usdc[POLYGON]!, w.executor.address);
    const created = await w.t.app.fastify.inject({
      method: 'POST',
      url: '/v1/rebalances',
      headers: w.auth,
      payload: { from_chain_id: BASE, to_chain_id: POLYGON, amount: (100n * USDC).toString() },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as Rebalance).id;
    const deps = rebalanceRunDeps(w.t.deps)!;

    await rpc('evm_setAutomine', [false]);
    try {
      // Signed and sent at today's fees; then the base fee jumps past them before a block is made.
      expect(await runBurn(deps, id)).toEqual({ state: 'waiting' });
      const first = await w.t.db.db
        .selectFrom('executor_transactions')
        .selectAll()
        .where('rebalance_id', '=', id)
        .execute();
      expect(first.map((t) => [t.purpose, t.attempt])).toEqual([
        ['rebalance.approve', 1],
        ['rebalance.burn', 1],
      ]);
      const signedFee = parseTransaction(first[1]!.raw as Hex).maxFeePerGas!;
      await rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(signedFee * 10n).toString(16)}`]);
      await rpc('evm_mine', []);
      expect(await base().getTransactionCount({ address: w.executor.address })).toBe(0);

      // Still unconfirmed after the replace delay: signed again, same nonces, higher fees.
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await runBurn(deps, id)).toEqual({ state: 'waiting' });
      const attempts = await w.t.db.db
        .selectFrom('executor_transactions')
        .selectAll()
        .where('rebalance_id', '=', id)
        .orderBy('nonce')
        .orderBy('attempt')
        .execute();
      expect(attempts.map((t) => [t.purpose, t.nonce, t.attempt])).toEqual([
        ['rebalance.approve', '0', 1],
        ['rebalance.approve', '0', 2],
        ['rebalance.burn', '1', 1],
        ['rebalance.burn', '1', 2],
      ]);
      const replacementBurn = attempts[3]!.hash as Hex;
      const pending = (
        await w.t.app.fastify.inject({ method: 'GET', url: `/v1/rebalances/${id}`, headers: w.auth })
      ).json();
      expect(pending).toMatchObject({ phase: 'burn_submitted', burn_tx: replacementBurn });

      await rpc('evm_mine', []);
      expect(await runBurn(deps, id)).toEqual({ state: 'done' });
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    const states = await w.t.db.db
      .selectFrom('executor_transactions')
      .select(['purpose', 'attempt', 'state'])
      .where('rebalance_id', '=', id)
      .orderBy('nonce')
      .orderBy('attempt')
      .execute();
    expect(states).toEqual([
      { purpose: 'rebalance.approve', attempt: 1, state: 'dropped' },
      { purpose: 'rebalance.approve', attempt: 2, state: 'mined' },
      { purpose: 'rebalance.burn', attempt: 1, state: 'dropped' },
      { purpose: 'rebalance.burn', attempt: 2, state: 'mined' },
    ]);
    expect(await w.t.deps.chain!.erc20Balance(BASE, w.usdc[BASE]!, w.executor.address)).toBe(
      base0 - 100n * USDC,
    );

    const done = await w.t.app.fastify.inject({
      method: 'POST',
      url: `/v1/rebalances/${id}/complete`,
      headers: w.auth,
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'filled', phase: 'minted' });
    expect(await w.t.deps.chain!.erc20Balance(POLYGON, w.usdc[POLYGON]!, w.executor.address)).toBe(
      polygon0 + 100n * USDC,
    );
  });
});
