// GET /v1/account/export: everything the service keeps about one account, read in one
// repeatable-read snapshot, each module giving its sections (src/lifecycle/parts.ts). Credentials appear as metadata only: never a token, a token hash,
// sealed ciphertext or a signature (see docs/decisions.md, "Account export").

import type { AccountExportContext } from '../core/account-part.ts';
import type { Clock } from '../core/clock.ts';
import { type Db, type Tx, withTransaction } from '../core/db/database.ts';
import { accountParts } from './parts.ts';

export const EXPORT_VERSION = 1;
/** Each bounded array keeps at most this many items, the newest; its name then goes in `truncated`. */
export const EXPORT_ARRAY_BOUND = 10_000;

type Json = Record<string, unknown>;

export interface AccountExport {
  export_version: number;
  generated_at: string;
  truncated: string[];
  account: {
    address: string;
    contact: string | null;
    kind: string;
    created_at: string;
    offboarded_at: string | null;
  };
  api_keys: Json[];
  sessions: Json[];
  policies: Json[];
  delegations: Json[];
  intents: Json[];
  ledger_entries: Json[];
  payment_credits: Json[];
  balance: { micro: string } | null;
  events: Json[];
  webhooks: { secret_configured: boolean; failures: Json[] };
  auto_topup: { rule: Json | null; authorizations: Json[] } | null;
  venue_credentials: Json[];
  pm_orders: Json[];
  pm_positions: Json[];
  audit_log: Json[];
  statements_manifest: { bucket_bound: boolean; keys: string[] };
  /** The wallets the chain watcher keeps books for, each with its chain's cursor (docs/ledger.md). */
  watched_wallets: Json[];
}

/** The export's sections in the order of the document (after `export_version`, `generated_at`, `truncated`). */
export const EXPORT_SECTIONS = [
  'account',
  'api_keys',
  'sessions',
  'policies',
  'delegations',
  'intents',
  'ledger_entries',
  'payment_credits',
  'balance',
  'events',
  'webhooks',
  'auto_topup',
  'venue_credentials',
  'pm_orders',
  'pm_positions',
  'audit_log',
  'statements_manifest',
  'watched_wallets',
] as const satisfies ReadonlyArray<keyof AccountExport>;

function sectionIndex(name: string): number {
  return (EXPORT_SECTIONS as readonly string[]).indexOf(name.split('.')[0]!);
}

export async function buildAccountExport(
  db: Db,
  clock: Clock,
  accountId: string,
  bound: number = EXPORT_ARRAY_BOUND,
  /** Whether statement exports go to an S3 bucket (config), for `statements_manifest.bucket_bound`. */
  statementsBucketBound = false,
): Promise<AccountExport> {
  return withTransaction(db, (tx) => readExport(tx, clock, accountId, bound, statementsBucketBound), {
    isolation: 'repeatable read',
  });
}

async function readExport(
  tx: Tx,
  clock: Clock,
  accountId: string,
  bound: number,
  statementsBucketBound: boolean,
): Promise<AccountExport> {
  const generatedAt = clock.now();
  const truncated: string[] = [];
  const context: AccountExportContext = {
    tx,
    accountId,
    fetch: bound + 1,
    bounded(name, rows) {
      if (rows.length <= bound) return rows;
      truncated.push(name);
      return rows.slice(0, bound);
    },
  };
  const sections: Record<string, unknown> = {};
  for (const part of accountParts({ statementsBucketBound })) {
    if (!part.exportSections) continue;
    for (const [name, value] of Object.entries(await part.exportSections(context))) {
      if (name in sections) throw new Error(`two modules export the section ${name}`);
      sections[name] = value;
    }
  }
  const unknown = Object.keys(sections).filter(
    (name) => !(EXPORT_SECTIONS as readonly string[]).includes(name),
  );
  const missing = EXPORT_SECTIONS.filter((name) => !(name in sections));
  if (unknown.length > 0 || missing.length > 0)
    throw new Error(
      `export sections out of step: unknown ${unknown.join(', ')}; missing ${missing.join(', ')}`,
    );
  const document: Record<string, unknown> = {
    export_version: EXPORT_VERSION,
    generated_at: generatedAt.toISOString(),
    // In the document's order, as a reader meets the cut arrays.
    truncated: truncated.sort((a, b) => sectionIndex(a) - sectionIndex(b)),
  };
  for (const name of EXPORT_SECTIONS) document[name] = sections[name];
  return document as unknown as AccountExport;
}
