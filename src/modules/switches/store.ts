import type { Selectable } from 'kysely';
import { findAccountByAddress, findAccountById } from '../account/index.ts';
import { accountsWithPolicyFor, policyWalletsOf } from '../policies/store.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export const SWITCH_SCOPES = ['environment', 'venue', 'wallet', 'account'] as const;
export type SwitchScope = (typeof SWITCH_SCOPES)[number];
/** operator: set by `purser ops` or /v1/ops/. panic: the account's own POST /v1/account/panic. */
export type SwitchSource = 'operator' | 'panic';

export interface ExecutionSwitchesTable {
  scope: SwitchScope;
  /** '' for the environment; a venue name, a lowercase address or an account id. */
  target: string;
  source: SwitchSource;
  reason: string;
  set_by: string;
  set_at: Timestamp;
  account_ref: string | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    execution_switches: ExecutionSwitchesTable;
  }
}

export type SwitchRow = Selectable<ExecutionSwitchesTable>;

const COLUMNS = ['scope', 'target', 'source', 'reason', 'set_by', 'set_at'] as const;
export type OffSwitch = Pick<SwitchRow, (typeof COLUMNS)[number]>;

/**
 * Every switch that is off and applies to an execution by `accountId` (optionally through
 * `wallet` at `venue`), in one query on the primary key.
 */
export async function offSwitchesFor(
  db: DbExecutor,
  accountId: string,
  wallets: string[],
  venue: string | null,
): Promise<OffSwitch[]> {
  return db
    .selectFrom('execution_switches')
    .select(COLUMNS)
    .where((eb) => {
      const any = [
        eb.and([eb('scope', '=', 'environment'), eb('target', '=', '')]),
        eb.and([eb('scope', '=', 'account'), eb('target', '=', accountId)]),
      ];
      if (wallets.length) any.push(eb.and([eb('scope', '=', 'wallet'), eb('target', 'in', wallets)]));
      if (venue !== null) any.push(eb.and([eb('scope', '=', 'venue'), eb('target', '=', venue)]));
      return eb.or(any);
    })
    .execute();
}

/**
 * Every switch that is off and touches an account: the environment, every venue, the account
 * itself and the given wallets of the account.
 */
export async function offSwitchesOfAccount(
  db: DbExecutor,
  accountId: string,
  wallets: string[],
): Promise<OffSwitch[]> {
  return db
    .selectFrom('execution_switches')
    .select(COLUMNS)
    .where((eb) => {
      const any = [
        eb('scope', 'in', ['environment', 'venue']),
        eb.and([eb('scope', '=', 'account'), eb('target', '=', accountId)]),
      ];
      if (wallets.length) any.push(eb.and([eb('scope', '=', 'wallet'), eb('target', 'in', wallets)]));
      return eb.or(any);
    })
    .orderBy('scope')
    .orderBy('target')
    .orderBy('source')
    .execute();
}

/** Every switch that is off. */
export async function listOffSwitches(db: DbExecutor): Promise<OffSwitch[]> {
  return db
    .selectFrom('execution_switches')
    .select(COLUMNS)
    .orderBy('scope')
    .orderBy('target')
    .orderBy('source')
    .execute();
}

/** The venues an operator switched off, platform-wide. */
export async function offVenueSwitches(db: DbExecutor): Promise<OffSwitch[]> {
  return db
    .selectFrom('execution_switches')
    .select(COLUMNS)
    .where('scope', '=', 'venue')
    .orderBy('target')
    .execute();
}

export async function findOffSwitch(
  db: DbExecutor,
  scope: SwitchScope,
  target: string,
  source: SwitchSource,
): Promise<OffSwitch | undefined> {
  return db
    .selectFrom('execution_switches')
    .select(COLUMNS)
    .where('scope', '=', scope)
    .where('target', '=', target)
    .where('source', '=', source)
    .executeTakeFirst();
}

type OffSwitchInput = {
  scope: SwitchScope;
  target: string;
  source: SwitchSource;
  reason: string;
  setBy: string;
  at: Date;
};

/** Switches off (or replaces the reason of a switch already off); returns the row. */
export async function upsertOffSwitch(db: DbExecutor, row: OffSwitchInput): Promise<OffSwitch> {
  const written = await insertOffSwitch(db, row, 'replace');
  if (!written) throw new Error('upsertOffSwitch: no row returned');
  return written;
}

/** Switches off unless already off (the first reason stands); returns the row inserted, or undefined. */
export function insertOffSwitchIfOn(db: DbExecutor, row: OffSwitchInput): Promise<OffSwitch | undefined> {
  return insertOffSwitch(db, row, 'keep');
}

/** The switch row; on an existing one, `replace` its reason and setter or `keep` it (no row returned). */
function insertOffSwitch(
  db: DbExecutor,
  row: OffSwitchInput,
  existing: 'replace' | 'keep',
): Promise<OffSwitch | undefined> {
  return db
    .insertInto('execution_switches')
    .values({
      scope: row.scope,
      target: row.target,
      source: row.source,
      reason: row.reason,
      set_by: row.setBy,
      set_at: row.at,
      account_ref: row.scope === 'account' ? row.target : null,
    })
    .onConflict((oc) => {
      const target = oc.columns(['scope', 'target', 'source']);
      return existing === 'keep'
        ? target.doNothing()
        : target.doUpdateSet({ reason: row.reason, set_by: row.setBy, set_at: row.at });
    })
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Switches back on; returns the row that was off, or undefined when it was on already. */
export async function deleteOffSwitch(
  db: DbExecutor,
  scope: SwitchScope,
  target: string,
  source: SwitchSource,
): Promise<OffSwitch | undefined> {
  return db
    .deleteFrom('execution_switches')
    .where('scope', '=', scope)
    .where('target', '=', target)
    .where('source', '=', source)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/**
 * The accounts a wallet belongs to: the account whose address it is, and those with a policy for
 * it. Audit facts and events about a wallet switch go to each of them.
 */
export async function accountsOfWallet(db: DbExecutor, wallet: string): Promise<string[]> {
  const owner = await findAccountByAddress(db, wallet);
  const withPolicy = await accountsWithPolicyFor(db, wallet);
  return [...new Set([...(owner ? [owner.id] : []), ...withPolicy])].sort();
}

/** The wallets of an account: its address and every wallet it has a policy for. */
export async function walletsOfAccount(db: DbExecutor, accountId: string): Promise<string[]> {
  const account = await findAccountById(db, accountId);
  const withPolicy = await policyWalletsOf(db, accountId);
  return [...new Set([...(account ? [account.address] : []), ...withPolicy])].sort();
}
