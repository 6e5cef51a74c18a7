// Nonce lanes (table wallet_nonce_lanes, migration 0038): how several intents of one wallet run
// their operations at once without colliding on the account's nonce. An EntryPoint nonce is a
// sequence per 192-bit key, and Kernel v3's key ends in a 2-byte custom key; a lane is one such
// custom key, held by at most one intent from before its operation is signed until that operation
// settles, so each operation in flight has a key of its own. Lanes are handed out from this table
// under a lock per wallet (never derived from an intent id: 2 bytes collide), at most
// `executor.nonceLanes` per wallet (default 4: ERC-7562 lets an unstaked sender have 4 operations
// in a mempool). The first operation of an account not deployed yet, or of a permission not
// enabled yet, deploys or enables it: it runs alone (an exclusive lane), since two such operations
// would each try to deploy the account (AA10) or enable the permission.

import { lockUntilCommit, withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import type { Clock } from '../../core/clock.ts';
import { intentStatuses } from '../intents/index.ts';

export interface WalletNonceLanesTable {
  chain_id: number;
  wallet: string;
  lane: number;
  intent_id: string | null;
  exclusive: boolean;
  taken_at: Date | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    wallet_nonce_lanes: WalletNonceLanesTable;
  }
}

export interface LaneClaim {
  /** The custom nonce key (0 … lanes − 1). */
  lane: number;
  exclusive: boolean;
}

/**
 * Takes a nonce lane of the wallet for the intent's next operation, or null when none is free now
 * (ask again shortly). The lane the intent holds already, if any; with `exclusive`, lane 0 only when
 * no other intent holds a lane of the wallet; otherwise the lowest lane below `lanes` that no
 * intent holds, unless another intent runs alone. A lane whose holder is not executing any more
 * is free.
 */
export async function takeLane(
  db: Db,
  clock: Clock,
  request: { chainId: number; wallet: string; intentId: string; exclusive: boolean; lanes: number },
): Promise<LaneClaim | null> {
  const wallet = request.wallet.toLowerCase();
  return withTransaction(db, async (tx) => {
    await lockUntilCommit(tx, `nonce-lanes:${request.chainId}:${wallet}`);
    const rows = await tx
      .selectFrom('wallet_nonce_lanes')
      .select(['lane', 'intent_id', 'exclusive'])
      .where('chain_id', '=', request.chainId)
      .where('wallet', '=', wallet)
      .execute();
    const holders = rows.flatMap((r) => (r.intent_id === null ? [] : [r.intent_id]));
    const statuses = await intentStatuses(tx, holders);
    const held = rows.filter((r) => r.intent_id !== null && statuses.get(r.intent_id) === 'executing');
    const mine = held.find((r) => r.intent_id === request.intentId);
    if (mine) return { lane: mine.lane, exclusive: mine.exclusive };
    if (held.some((r) => r.exclusive)) return null;
    let lane: number | null = null;
    if (request.exclusive) {
      if (held.length === 0) lane = 0;
    } else {
      const busy = new Set(held.map((r) => r.lane));
      for (let i = 0; i < request.lanes && lane === null; i++) if (!busy.has(i)) lane = i;
    }
    if (lane === null) return null;
    await tx
      .insertInto('wallet_nonce_lanes')
      .values({
        chain_id: request.chainId,
        wallet,
        lane,
        intent_id: request.intentId,
        exclusive: request.exclusive,
        taken_at: clock.now(),
      })
      .onConflict((oc) =>
        oc.columns(['chain_id', 'wallet', 'lane']).doUpdateSet((eb) => ({
          intent_id: eb.ref('excluded.intent_id'),
          exclusive: eb.ref('excluded.exclusive'),
          taken_at: eb.ref('excluded.taken_at'),
        })),
      )
      .execute();
    return { lane, exclusive: request.exclusive };
  });
}

/** Gives back every lane the intent holds (in the caller's transaction). */
export async function releaseLanes(db: DbExecutor, intentId: string): Promise<void> {
  await db
    .updateTable('wallet_nonce_lanes')
    .set({ intent_id: null, exclusive: false, taken_at: null })
    .where('intent_id', '=', intentId)
    .execute();
}
