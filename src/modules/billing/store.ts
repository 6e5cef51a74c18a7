// The billing module's settings tables (migration 0011): operator-adjustable platform settings
// (prepaid float cap, default account cap, the metering switch) and per-account prepaid caps.

import type { ColumnType } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export interface PlatformSettingsTable {
  key: string;
  value: ColumnType<unknown, string, string>;
  updated_at: Timestamp;
  updated_by: string;
}

export interface PrepaidAccountCapsTable {
  account_id: string;
  cap_micro: ColumnType<string, string | bigint, string | bigint>;
  updated_at: Timestamp;
  updated_by: string;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    platform_settings: PlatformSettingsTable;
    prepaid_account_caps: PrepaidAccountCapsTable;
  }
}

export async function readSetting(db: DbExecutor, key: string): Promise<unknown> {
  const row = await db
    .selectFrom('platform_settings')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirst();
  return row?.value;
}

export async function writeSetting(
  db: DbExecutor,
  key: string,
  value: unknown,
  by: string,
  now: Date,
): Promise<void> {
  const json = JSON.stringify(value);
  await db
    .insertInto('platform_settings')
    .values({ key, value: json, updated_at: now, updated_by: by })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: json, updated_at: now, updated_by: by }))
    .execute();
}

export async function readAccountCap(db: DbExecutor, accountId: string): Promise<bigint | null> {
  const row = await db
    .selectFrom('prepaid_account_caps')
    .select('cap_micro')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? BigInt(row.cap_micro) : null;
}

export async function writeAccountCap(
  db: DbExecutor,
  accountId: string,
  capMicro: bigint | null,
  by: string,
  now: Date,
): Promise<void> {
  if (capMicro === null) {
    await db.deleteFrom('prepaid_account_caps').where('account_id', '=', accountId).execute();
    return;
  }
  await db
    .insertInto('prepaid_account_caps')
    .values({ account_id: accountId, cap_micro: capMicro.toString(), updated_at: now, updated_by: by })
    .onConflict((oc) =>
      oc
        .column('account_id')
        .doUpdateSet({ cap_micro: capMicro.toString(), updated_at: now, updated_by: by }),
    )
    .execute();
}

/** The caps of those of `ids` that have their own, by account id. */
export async function readAccountCaps(db: DbExecutor, ids: readonly string[]): Promise<Map<string, bigint>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('prepaid_account_caps')
    .select(['account_id', 'cap_micro'])
    .where('account_id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.account_id, BigInt(r.cap_micro)]));
}
