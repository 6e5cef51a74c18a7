// Operator-adjustable billing settings: the prepaid caps and whether metering is enforced. A row
// in platform_settings (or prepaid_account_caps) overrides the configured default; operators
// change them with `purser ops` or /v1/ops/ (docs/operations.md).

import type { Config } from '../../config.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { readAccountCap, readSetting, writeAccountCap, writeSetting } from './store.ts';

export const SETTING_METERING = 'metering_enforced';
export const SETTING_FLOAT_CAP = 'prepaid_float_cap_micro';
export const SETTING_ACCOUNT_CAP = 'prepaid_account_cap_micro';

export interface BillingSettings {
  meteringEnforced: boolean;
  floatCapMicro: bigint;
  /** The default per-account cap (an account may have its own). */
  accountCapMicro: bigint;
}

function micro(value: unknown, fallback: bigint): bigint {
  return typeof value === 'string' && /^\d+$/.test(value) ? BigInt(value) : fallback;
}

export async function readBillingSettings(db: DbExecutor, config: Config): Promise<BillingSettings> {
  const rows = await db
    .selectFrom('platform_settings')
    .select(['key', 'value'])
    .where('key', 'in', [SETTING_METERING, SETTING_FLOAT_CAP, SETTING_ACCOUNT_CAP])
    .execute();
  const byKey = new Map(rows.map((r) => [r.key, r.value]));
  const metering = byKey.get(SETTING_METERING);
  return {
    meteringEnforced: typeof metering === 'boolean' ? metering : config.fees.meteringEnforced,
    floatCapMicro: micro(byKey.get(SETTING_FLOAT_CAP), config.prepaid.floatCapMicro),
    accountCapMicro: micro(byKey.get(SETTING_ACCOUNT_CAP), config.prepaid.accountCapMicro),
  };
}

/** The prepaid cap of one account: its own if an operator set one, else the default. */
export async function accountPrepaidCap(db: DbExecutor, settings: BillingSettings, accountId: string) {
  return (await readAccountCap(db, accountId)) ?? settings.accountCapMicro;
}

const meteringCache = new WeakMap<object, { value: boolean; readAt: number; generation: number }>();
/** Bumped by every switch in this process, so this process sees its own switch at once. */
let meteringGeneration = 0;
const METERING_CACHE_MS = 2_000;

/**
 * Whether fees are debited now. Read on the request path of every metered route, so it is cached
 * for two seconds per `cacheKey` (the database handle): an operator's switch takes effect within
 * that. `reader` is the caller's transaction when there is one (the embedded database has one
 * connection).
 */
export async function meteringEnforced(
  reader: DbExecutor,
  cacheKey: object,
  config: Config,
  nowMs: number,
): Promise<boolean> {
  const cached = meteringCache.get(cacheKey);
  if (cached && cached.generation === meteringGeneration && nowMs - cached.readAt < METERING_CACHE_MS) {
    return cached.value;
  }
  const generation = meteringGeneration;
  const value = await readSetting(reader, SETTING_METERING);
  const enforced = typeof value === 'boolean' ? value : config.fees.meteringEnforced;
  meteringCache.set(cacheKey, { value: enforced, readAt: nowMs, generation });
  return enforced;
}

/** Operator: switch metering on or off (null: back to the configured default). */
export async function setMeteringEnforced(db: DbExecutor, enforced: boolean | null, by: string, now: Date) {
  if (enforced === null)
    await db.deleteFrom('platform_settings').where('key', '=', SETTING_METERING).execute();
  else await writeSetting(db, SETTING_METERING, enforced, by, now);
  meteringGeneration += 1;
}

/** Operator: the platform-wide prepaid float cap or the default account cap (null: the configured default). */
export async function setPrepaidCap(
  db: DbExecutor,
  which: 'float' | 'account_default',
  capMicro: bigint | null,
  by: string,
  now: Date,
) {
  const key = which === 'float' ? SETTING_FLOAT_CAP : SETTING_ACCOUNT_CAP;
  if (capMicro === null) await db.deleteFrom('platform_settings').where('key', '=', key).execute();
  else await writeSetting(db, key, capMicro.toString(), by, now);
}

/** Operator: one account's prepaid cap (null: the default applies again). */
export async function setAccountPrepaidCap(
  db: DbExecutor,
  accountId: string,
  capMicro: bigint | null,
  by: string,
  now: Date,
) {
  await writeAccountCap(db, accountId, capMicro, by, now);
}
