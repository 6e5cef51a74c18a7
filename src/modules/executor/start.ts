// The executor's first moves on an admitted intent: claim it (planned → executing), then the
// checks before the run, in order, each ending it with its abort reason (spec section 7): the
// kind on its chain, the chain served, the executor's key, the switches, an active delegation,
// and the account's balance of what it sells (the one chain read). An abort releases what admission held and gives the fee back (no fill yet).
//
// The on-chain run (balance, planner, slices by session key, ledgered fills) is not built yet:
// nothing schedules `startIntent`; docs/executor.md says what remains.

import { getAddress } from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { claimPlannedIntent, findIntentById, type IntentRow } from '../intents/index.ts';
import { reverseGroup } from '../ledger/index.ts';
import { releaseReservation } from '../policies/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { switchesOffFor } from '../switches/index.ts';

/** The abort reasons of spec section 7 that the executor sets. */
export type AbortReason =
  | 'UNSUPPORTED_KIND'
  | 'EXECUTOR_UNCONFIGURED'
  | 'NO_DELEGATION'
  | 'UNSUPPORTED_CHAIN'
  | 'POLICY_VIOLATION'
  | 'INSUFFICIENT_BALANCE'
  | 'DEPTH_COLLAPSE'
  | 'PRICE_GAP'
  | 'VENUE_DISAGREEMENT'
  | 'VENUE_NO_QUOTE'
  | 'UNSUPPORTED_TOKEN'
  | 'VENUE_UNAVAILABLE'
  | 'NO_PRICE_REFERENCE'
  | 'SPEND_CAP_EXCEEDED'
  | 'EXECUTION_FAILED'
  | 'EXECUTION_ERROR'
  | 'EXECUTION_INTERRUPTED';

export interface Abort {
  reason: AbortReason;
  detail: Record<string, unknown>;
}

export interface ExecutorDeps {
  config: Config;
  clock: Clock;
  db: Db;
  registry: TokenRegistry;
  /** Reads the account's balance (the only chain read before the run). */
  chain: ChainPort;
}

export type StartOutcome =
  | { state: 'not_planned' }
  | { state: 'aborted'; intent: IntentRow; abort: Abort }
  | { state: 'ready'; intent: IntentRow; delegationId: string };

const actor = 'executor';

/**
 * Claims the intent and runs the checks before the run. `not_planned` when it is not
 * planned any more (cancelled, or another worker claimed it): nothing is done. `aborted` when a
 * check refused it (the intent is aborted, its hold released, its fee reversed, `intent.aborted`
 * emitted). `ready` when the on-chain run may begin, with the delegation it will use.
 */
export async function startIntent(deps: ExecutorDeps, id: string): Promise<StartOutcome> {
  const claimed = await withTransaction(deps.db, async (tx) => {
    const row = await claimPlannedIntent(tx, id, deps.clock.now());
    if (row) {
      const facts = { id: row.id, wallet: row.wallet, kind: row.kind, chain_id: row.chain_id };
      await emitEvent(tx, deps.clock, {
        accountId: row.account_id,
        kind: 'intent.executing',
        subject: row.id,
        payload: facts,
      });
    }
    return row;
  });
  if (!claimed) return { state: 'not_planned' };
  const refusal = await preflight(deps, claimed);
  if ('reason' in refusal) {
    const intent = await abortIntent(deps, claimed.id, refusal);
    return { state: 'aborted', intent, abort: refusal };
  }
  return { state: 'ready', intent: claimed, delegationId: refusal.delegationId };
}

/** The checks in the order the spec's table reads them; the first that refuses ends the run. */
async function preflight(deps: ExecutorDeps, row: IntentRow): Promise<Abort | { delegationId: string }> {
  const chain = deps.registry.chain(row.chain_id);
  if (row.kind === 'conversion' && !chain?.venues.some((v) => v.settles)) {
    return {
      reason: 'UNSUPPORTED_KIND',
      detail: { kind: row.kind, chain_id: row.chain_id, why: 'no venue settles conversions on this chain' },
    };
  }
  if (!deps.config.rpcUrls[row.chain_id] || !deps.config.bundlerUrls[row.chain_id]) {
    const missing = [
      ...(deps.config.rpcUrls[row.chain_id] ? [] : [`RPC_URL_${row.chain_id}`]),
      ...(deps.config.bundlerUrls[row.chain_id] ? [] : [`BUNDLER_URL_${row.chain_id}`]),
    ];
    return { reason: 'UNSUPPORTED_CHAIN', detail: { chain_id: row.chain_id, unconfigured: missing } };
  }
  if (!deps.config.executorPrivateKey) {
    return { reason: 'EXECUTOR_UNCONFIGURED', detail: { missing: 'PURSER_EXECUTOR_PRIVATE_KEY' } };
  }
  const off = await switchesOffFor(deps.db, row.account_id, row.wallet);
  const first = off[0];
  if (first) {
    return {
      reason: 'EXECUTION_INTERRUPTED',
      detail: { switch: { scope: first.scope, target: first.target, reason: first.reason }, unconfirmed: [] },
    };
  }
  const nowSecs = Math.floor(deps.clock.now().getTime() / 1000);
  const delegation = await activeDelegation(deps.db, row, nowSecs);
  if (!delegation) {
    return {
      reason: 'NO_DELEGATION',
      detail: { wallet: row.wallet, chain_id: row.chain_id, why: 'no active session-key delegation' },
    };
  }
  // The account must hold what it sells (for a gas top-up: the wrapped native to unwrap).
  const token = getAddress(row.params.sell_token);
  const required = BigInt(row.params.sell_amount);
  let held: bigint;
  try {
    held = await deps.chain.erc20Balance(row.chain_id, token, getAddress(row.wallet));
  } catch (err) {
    return { reason: 'EXECUTION_ERROR', detail: { step: 'balance', message: (err as Error).message } };
  }
  if (held < required) {
    const symbol = deps.registry.findToken(row.chain_id, token)?.symbol ?? token;
    return {
      reason: 'INSUFFICIENT_BALANCE',
      detail: {
        token: symbol,
        address: token.toLowerCase(),
        held: held.toString(),
        required: required.toString(),
      },
    };
  }
  return { delegationId: delegation };
}

/** The newest active delegation of the intent's wallet on its chain, valid now. */
async function activeDelegation(db: DbExecutor, row: IntentRow, nowSecs: number): Promise<string | null> {
  const found = await db
    .selectFrom('delegations')
    .select('id')
    .where('account_id', '=', row.account_id)
    .where('wallet', '=', row.wallet)
    .where('chain_id', '=', row.chain_id)
    .where('status', '=', 'active')
    .where('valid_after', '<=', nowSecs)
    .where('valid_until', '>', nowSecs)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return found?.id ?? null;
}

/**
 * Aborts an executing intent that has no fill: `params.abort` set, its spend reservation
 * released, its fee reversed, `intent.aborted` emitted and an audit fact, in one transaction.
 * Returns the aborted row.
 */
export async function abortIntent(deps: ExecutorDeps, id: string, abort: Abort): Promise<IntentRow> {
  return withTransaction(deps.db, async (tx) => {
    const row = await findIntentById(tx, id, true);
    if (!row || row.status !== 'executing') {
      throw new Error(`intent ${id} is ${row?.status ?? 'missing'}: only an executing intent is aborted`);
    }
    const now = deps.clock.now();
    const params = { ...row.params, abort: { reason: abort.reason, detail: abort.detail } };
    const aborted = await tx
      .updateTable('intents')
      .set({ status: 'aborted', params: JSON.stringify(params), updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'executing')
      .returning('id')
      .executeTakeFirst();
    if (!aborted) throw new Error(`intent ${id} changed while it was aborted`);
    if (row.reservation_id) {
      await releaseReservation(tx, deps.clock, {
        accountId: row.account_id,
        reservationId: row.reservation_id,
      });
    }
    let feeReversed = false;
    if (row.fee_group_id) {
      const reversed = await reverseGroup(tx, deps.clock, {
        groupId: row.fee_group_id,
        accountId: row.account_id,
        reason: `intent ${id} aborted ${abort.reason} with no fill`,
      });
      if (!reversed.ok && reversed.reason !== 'conflict') {
        throw new Error(`fee of intent ${id} could not be reversed: ${reversed.reason}`);
      }
      feeReversed = true;
    }
    const facts = {
      id,
      wallet: row.wallet,
      kind: row.kind,
      reason: abort.reason,
      detail: abort.detail,
      fee_reversed: feeReversed,
    };
    await emitEvent(tx, deps.clock, {
      accountId: row.account_id,
      kind: 'intent.aborted',
      subject: id,
      payload: facts,
    });
    await recordAudit(tx, deps.clock, {
      accountId: row.account_id,
      actor,
      action: 'intent.aborted',
      subject: id,
      details: facts,
    });
    return { ...row, status: 'aborted', params, updated_at: now };
  });
}
