// The delegations table: one row per session-key grant (see migration 0008).

import type { Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import type { ParamRule } from './kernel.ts';

export type DelegationStatus = 'prepared' | 'active' | 'revoked' | 'expired';

/** One granted call; `rules` are the call policy's parameter rules the service derived (rules.ts). */
export interface StoredCall {
  target: string;
  selector: string;
  value_limit: string;
  /** Absent only before the rules are derived (a request's scope); stored rows always have it. */
  rules?: ParamRule[];
}

/** The scope as stored and returned: the request's shape plus each call's rules, addresses lowercase. */
export interface StoredScope {
  calls: StoredCall[];
  valid_after: number;
  valid_until: number;
  rate_limit: { count: number; interval_secs: number } | null;
}

export interface DelegationsTable {
  id: string;
  account_id: string;
  wallet: string;
  chain_id: number;
  status: DelegationStatus;
  permission_id: string;
  validation_id: string;
  kernel_version: string;
  domain_version: string;
  enable_data: string;
  selector_data: string;
  kernel_nonce: number;
  digest: string;
  session_key: string;
  modules: unknown;
  scope: unknown;
  valid_after: string | number;
  valid_until: string | number;
  account_deployed: boolean;
  policy_version: number;
  renewed_from: string | null;
  enable_sig: string | null;
  owner: string | null;
  /** Set at confirm for an account not deployed then: its index and the factory call that deploys it. */
  account_index: string | null;
  factory: string | null;
  factory_data: string | null;
  created_at: Timestamp;
  confirmed_at: Timestamp | null;
  revoked_at: Timestamp | null;
  expired_at: Timestamp | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    delegations: DelegationsTable;
  }
}

/** A delegation as the module uses it: the table's row with its json and bigint columns typed. */
export interface DelegationRow extends Omit<
  Selectable<DelegationsTable>,
  'modules' | 'scope' | 'valid_after' | 'valid_until'
> {
  modules: Record<string, string>;
  scope: StoredScope;
  valid_after: number;
  valid_until: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);

type RawRow = Selectable<DelegationsTable>;

function fromRaw(raw: RawRow): DelegationRow {
  const scope = raw.scope as StoredScope;
  return {
    ...raw,
    modules: raw.modules as Record<string, string>,
    // Rows stored before parameter rules existed granted their calls without any.
    scope: { ...scope, calls: scope.calls.map((c) => ({ ...c, rules: c.rules ?? [] })) },
    valid_after: Number(raw.valid_after),
    valid_until: Number(raw.valid_until),
  };
}

export async function insertDelegation(tx: DbExecutor, row: DelegationRow): Promise<void> {
  await tx
    .insertInto('delegations')
    .values({ ...row, modules: JSON.stringify(row.modules), scope: JSON.stringify(row.scope) })
    .execute();
}

/** The delegation when it belongs to the account; `forUpdate` locks it for the transaction. */
export async function findDelegation(
  db: DbExecutor,
  accountId: string,
  id: string,
  forUpdate = false,
): Promise<DelegationRow | null> {
  if (!isUuid(id)) return null;
  let q = db.selectFrom('delegations').selectAll().where('id', '=', id).where('account_id', '=', accountId);
  if (forUpdate) q = q.forUpdate();
  const raw = await q.executeTakeFirst();
  return raw ? fromRaw(raw) : null;
}

/** The wallet of the account's delegation `id`, or null (the guard's resource locator). */
export async function delegationWallet(
  db: DbExecutor,
  accountId: string,
  id: string,
): Promise<string | null> {
  if (!isUuid(id)) return null;
  const row = await db
    .selectFrom('delegations')
    .select('wallet')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.wallet ?? null;
}

export async function permissionIdTaken(
  db: DbExecutor,
  chainId: number,
  wallet: string,
  permissionId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('delegations')
    .select('id')
    .where('chain_id', '=', chainId)
    .where('wallet', '=', wallet)
    .where('permission_id', '=', permissionId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Newest first; one wallet's when `wallet` is not null. */
export async function listDelegationRows(
  db: DbExecutor,
  accountId: string,
  wallet: string | null,
  limit: number,
): Promise<DelegationRow[]> {
  let q = db.selectFrom('delegations').selectAll().where('account_id', '=', accountId);
  if (wallet !== null) q = q.where('wallet', '=', wallet);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(fromRaw);
}

export async function updateDelegation(
  tx: DbExecutor,
  id: string,
  changes: Partial<
    Pick<
      DelegationRow,
      | 'status'
      | 'enable_sig'
      | 'owner'
      | 'account_index'
      | 'factory'
      | 'factory_data'
      | 'confirmed_at'
      | 'revoked_at'
      | 'expired_at'
    >
  >,
): Promise<void> {
  await tx.updateTable('delegations').set(changes).where('id', '=', id).execute();
}

/** Marks every open grant whose valid_until has passed `nowSecs` expired; returns them. */
export async function expireDue(tx: DbExecutor, nowSecs: number, at: Date): Promise<DelegationRow[]> {
  const rows = await tx
    .updateTable('delegations')
    .set({ status: 'expired', expired_at: at })
    .where('status', 'in', ['prepared', 'active'])
    .where('valid_until', '<=', nowSecs)
    .returningAll()
    .execute();
  return rows.map(fromRaw);
}

/** The id of the wallet's newest active delegation on the chain that is valid at `nowSecs`, or null. */
export async function newestValidDelegation(
  db: DbExecutor,
  of: { accountId: string; wallet: string; chainId: number },
  nowSecs: number,
): Promise<string | null> {
  const found = await db
    .selectFrom('delegations')
    .select('id')
    .where('account_id', '=', of.accountId)
    .where('wallet', '=', of.wallet)
    .where('chain_id', '=', of.chainId)
    .where('status', '=', 'active')
    .where('valid_after', '<=', nowSecs)
    .where('valid_until', '>', nowSecs)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return found?.id ?? null;
}

/** Open (prepared or active) delegations of the account, oldest first; `lock` holds them for the caller's transaction. */
export async function openDelegations(db: DbExecutor, accountId: string, lock = false) {
  const q = db
    .selectFrom('delegations')
    .select(['id', 'wallet', 'kernel_nonce'])
    .where('account_id', '=', accountId)
    .where('status', 'in', ['prepared', 'active'])
    .orderBy('created_at')
    .orderBy('id');
  return (lock ? q.forUpdate() : q).execute();
}
