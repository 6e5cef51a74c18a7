// The executor's first moves on an admitted intent: claim it (planned → executing), then the
// checks before the run, in order, each ending it with its abort reason (spec section 7): the
// kind on its chain, the chain served, the executor's key, the switches, an active delegation,
// and the account's balance of what it sells (the one chain read). An abort releases what admission held and gives the fee back (no fill yet).
// The run that follows is run.ts.

import { getAddress } from 'viem';
import type { BundlerPort } from '../../adapters/bundler/port.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { VenueAdapter } from '../../adapters/venues/index.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import { newestValidDelegation } from '../delegations/index.ts';
import { emitEvent } from '../events/index.ts';
import { claimPlannedIntent, type IntentRow } from '../intents/index.ts';
import type { PriceReferences } from '../prices/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { switchesOffFor } from '../switches/index.ts';
import { abortIntent } from './finish.ts';
import type { Abort } from './report.ts';

export interface ExecutorDeps {
  config: Config;
  clock: Clock;
  db: Db;
  registry: TokenRegistry;
  /** Reads the account's balance (the only chain read before the run). */
  chain: ChainPort;
  /** Sends the slices' UserOperations; absent, or without the chain: UNSUPPORTED_CHAIN. */
  bundler: BundlerPort | undefined;
}

/** What a run step needs besides: the venues, the price references and a log. */
export interface RunDeps extends ExecutorDeps {
  venues: readonly VenueAdapter[];
  prices: PriceReferences | undefined;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export type StartOutcome =
  | { state: 'not_planned' }
  | { state: 'aborted'; intent: IntentRow; abort: Abort }
  | { state: 'ready'; intent: IntentRow; delegationId: string };

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
  const unserved = unservedChain(deps, row.chain_id);
  if (unserved) return unserved;
  if (!deps.config.executorPrivateKey) {
    return { reason: 'EXECUTOR_UNCONFIGURED', detail: { missing: 'PURSER_EXECUTOR_PRIVATE_KEY' } };
  }
  const off = await switchedOff(deps.db, row);
  if (off) return off;
  const nowSecs = Math.floor(deps.clock.now().getTime() / 1000);
  const delegation = await activeDelegation(deps.db, row, nowSecs);
  if (!delegation) {
    return {
      reason: 'NO_DELEGATION',
      detail: { wallet: row.wallet, chain_id: row.chain_id, why: 'no active session-key delegation' },
    };
  }
  // The account must hold what it sells (for a gas top-up: the wrapped native to unwrap).
  const short = await balanceShort(deps, row, BigInt(row.params.sell_amount));
  if (short) return short;
  return { delegationId: delegation };
}

/**
 * EXECUTION_INTERRUPTED naming the first execution switch that is off for the intent (environment,
 * account or wallet), read fresh. A venue's switch only removes the venue from planning and
 * slicing (VENUE_UNAVAILABLE when it was the one left; decisions.md "Switches").
 */
export async function switchedOff(db: DbExecutor, row: IntentRow): Promise<Abort | null> {
  const first = (await switchesOffFor(db, row.account_id, row.wallet)).find((s) => s.scope !== 'venue');
  if (!first) return null;
  return {
    reason: 'EXECUTION_INTERRUPTED',
    detail: { switch: { scope: first.scope, target: first.target, reason: first.reason }, unconfirmed: [] },
  };
}

/**
 * INSUFFICIENT_BALANCE when the account holds less than `required` of the token it sells (named by
 * symbol and address, with what it holds); EXECUTION_ERROR when the balance cannot be read.
 */
export async function balanceShort(
  deps: Pick<ExecutorDeps, 'chain' | 'registry'>,
  row: IntentRow,
  required: bigint,
): Promise<Abort | null> {
  const token = getAddress(row.params.sell_token);
  let held: bigint;
  try {
    held = await deps.chain.erc20Balance(row.chain_id, token, getAddress(row.wallet));
  } catch (err) {
    return { reason: 'EXECUTION_ERROR', detail: { step: 'balance', message: (err as Error).message } };
  }
  if (held >= required) return null;
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

/** UNSUPPORTED_CHAIN when the chain has no RPC or no bundler configured, naming the settings. */
export function unservedChain(
  deps: { chain: ChainPort; bundler: BundlerPort | undefined },
  chainId: number,
): Abort | null {
  const missing = [
    ...(deps.chain.supports(chainId) ? [] : [`RPC_URL_${chainId}`]),
    ...(deps.bundler?.supports(chainId) ? [] : [`BUNDLER_URL_${chainId}`]),
  ];
  return missing.length === 0
    ? null
    : { reason: 'UNSUPPORTED_CHAIN', detail: { chain_id: chainId, unconfigured: missing } };
}

/** The newest active delegation of the intent's wallet on its chain, valid now. */
export async function activeDelegation(
  db: DbExecutor,
  row: IntentRow,
  nowSecs: number,
): Promise<string | null> {
  return newestValidDelegation(
    db,
    { accountId: row.account_id, wallet: row.wallet, chainId: row.chain_id },
    nowSecs,
  );
}
