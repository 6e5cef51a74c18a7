// The bytes of a statement (docs/statements.md). Nothing here reads a clock: the same summary and
// entries always give the same bytes.
//
// JSON: one RFC 8785 canonical document (keys sorted, no whitespace),
//   {"entries":[<entry>,…],"statement":<summary>,"version":2}
// with the entries in seq order (each rendered by the database, ledger/statement-reads.ts). Sorted keys put
// `entries` first, so the document is written while the entries stream, with the summary
// (already known from the balance table) at the end.
// CSV: the balance table, RFC 4180 (CRLF line ends, a header row), one row per (ledger account,
// asset).
//
// Format versions: 1 had no token metadata; 2 gives each balance row its `symbol` and `decimals`
// (assets.ts) and the summary its `format_version`. An export stored under version 1 keeps its
// bytes (objects are content-addressed); a new export of the same range is a new object.

import { canonicalJson } from '../../core/canonical-json.ts';
import { formatBalanceUsd } from '../billing/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { assetMetadata } from '../registry/index.ts';
import type { StatementPeriod } from './period.ts';
import type { StatementBalanceRow, StatementScope } from '../ledger/index.ts';

/** The statement format: the JSON document's `version` and the summary's `format_version`. */
export const STATEMENT_DOCUMENT_VERSION = 2;

export interface StatementBalance {
  ledger_account: string;
  asset: string;
  /** The token's symbol (`USDC`, `USD`, `ETH`); null when the registry does not know the asset. */
  symbol: string | null;
  /** Decimals of the base units; null when the registry does not know the asset. */
  decimals: number | null;
  /** Signed base units (micro-USD for `USD`), debit positive, like the ledger. */
  opening: string;
  debits: string;
  credits: string;
  /** opening + debits − credits. */
  closing: string;
  entry_count: number;
  first_seq: number | null;
  last_seq: number | null;
}

/** The statement's summary: the API's `statement` and the document's `statement`. */
export interface StatementSummary {
  /** STATEMENT_DOCUMENT_VERSION. */
  format_version: typeof STATEMENT_DOCUMENT_VERSION;
  wallet: string;
  period: { label: string; start: string; end: string };
  /** Ledger positions of the first and last included entry of the period (null when none). */
  ledger_range: { first_seq: number | null; last_seq: number | null };
  balances: StatementBalance[];
  /** Net fees charged for the wallet's actions in the period (refunds deducted), USD. */
  fees_usd: string;
  entry_count: number;
}

/**
 * The summary from the balance table. A (ledger account, asset) whose opening balance is zero and
 * that has no entry in the period is left out: it says nothing. Each row's symbol and decimals
 * come from `registry`.
 */
export function buildStatementSummary(
  scope: StatementScope,
  period: StatementPeriod,
  rows: readonly StatementBalanceRow[],
  registry: TokenRegistry,
): StatementSummary {
  const kept = rows.filter((r) => r.opening !== 0n || r.entryCount > 0);
  let first: number | null = null;
  let last: number | null = null;
  let entryCount = 0;
  let feesMicro = 0n;
  for (const r of kept) {
    entryCount += r.entryCount;
    if (r.firstSeq !== null && (first === null || r.firstSeq < first)) first = r.firstSeq;
    if (r.lastSeq !== null && (last === null || r.lastSeq > last)) last = r.lastSeq;
    // A fee debits the prepaid balance; a refund (the fee group's reversal) credits it back.
    if (r.ledgerAccount === scope.prepaidAccount) feesMicro += r.debits - r.credits;
  }
  return {
    format_version: STATEMENT_DOCUMENT_VERSION,
    wallet: scope.wallet,
    period: { label: period.label, start: period.start.toISOString(), end: period.end.toISOString() },
    ledger_range: { first_seq: first, last_seq: last },
    balances: kept.map((r) => ({
      ledger_account: r.ledgerAccount,
      asset: r.asset,
      ...assetMetadata(registry, r.asset),
      opening: r.opening.toString(),
      debits: r.debits.toString(),
      credits: r.credits.toString(),
      closing: (r.opening + r.debits - r.credits).toString(),
      entry_count: r.entryCount,
      first_seq: r.firstSeq,
      last_seq: r.lastSeq,
    })),
    fees_usd: formatBalanceUsd(feesMicro),
    entry_count: entryCount,
  };
}

/** What the JSON document starts with, before the first entry. */
export const STATEMENT_JSON_HEAD = '{"entries":[';

/** What the JSON document ends with, after the last entry. */
export function statementJsonTail(summary: StatementSummary): string {
  return `],"statement":${canonicalJson(summary)},"version":${STATEMENT_DOCUMENT_VERSION}}`;
}

export const STATEMENT_CSV_COLUMNS = [
  'wallet',
  'period',
  'period_start',
  'period_end',
  'ledger_account',
  'asset',
  'symbol',
  'decimals',
  'opening',
  'debits',
  'credits',
  'closing',
  'entry_count',
  'first_seq',
  'last_seq',
] as const;

/** A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break. */
function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The balance table as CSV: the header row, then one row per (ledger account, asset). */
export function renderStatementCsv(summary: StatementSummary): string {
  const lines = [STATEMENT_CSV_COLUMNS.join(',')];
  for (const b of summary.balances) {
    lines.push(
      [
        summary.wallet,
        summary.period.label,
        summary.period.start,
        summary.period.end,
        b.ledger_account,
        b.asset,
        b.symbol,
        b.decimals,
        b.opening,
        b.debits,
        b.credits,
        b.closing,
        b.entry_count,
        b.first_seq,
        b.last_seq,
      ]
        .map(csvField)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
