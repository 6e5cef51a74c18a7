// Generating a statement export: read the balance table and stream the entries in keyset batches
// from one repeatable-read snapshot, writing the bytes to a staging object as they come (hashed on
// the way), then store the object under a key derived from its hash and record the export. At no
// point is more than one batch of entries in memory.

import type { ObjectStore, StagedObject } from '../../adapters/object-store/port.ts';
import { ObjectStoreError } from '../../adapters/object-store/port.ts';
import { SUPPORTED_CHAINS } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../core/db/database.ts';
import { invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import type { TokenRegistry } from '../registry/index.ts';
import {
  buildStatementSummary,
  renderStatementCsv,
  STATEMENT_JSON_HEAD,
  statementJsonTail,
  type StatementSummary,
} from './content.ts';
import { parseStatementPeriod, type StatementPeriod } from './period.ts';
import {
  readStatementBalances,
  readStatementEntryBatch,
  statementScope,
  type StatementEntryBatch,
} from '../ledger/index.ts';
import { recordStatementExport, type StatementFormat } from './store.ts';

/** Entries read per round trip. */
export const STATEMENT_BATCH_SIZE = 5_000;

export const STATEMENT_CONTENT_TYPES: Record<StatementFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export interface GenerateStatementDeps {
  db: Db;
  clock: Clock;
  /** Where exports are kept; an S3 bucket is reported as `export.bucket_bound`. */
  objectStore: ObjectStore;
  /** Where each balance row's symbol and decimals come from (the application's, built at start). */
  tokenRegistry: TokenRegistry;
}

export interface GenerateStatementParameters {
  accountId: string;
  wallet: string;
  /** `YYYY-MM` (a UTC month) or `YYYY-MM-DD` (a UTC day), as the client sent it. */
  period: string;
  format: StatementFormat;
}

export interface GenerateStatementOptions {
  /** Entries per batch (default STATEMENT_BATCH_SIZE). */
  batchSize?: number;
  /** Called with the size of each batch as it is written (tests and benchmarks watch it). */
  onBatch?: (entries: number) => void;
  /** Checked before each batch: a statement that outlives its request stops, storing nothing. */
  deadline?: Deadline;
}

export interface StatementExportInfo {
  format: StatementFormat;
  key: string;
  bytes: number;
  contentType: string;
  bucketBound: boolean;
  downloadPath: string;
}

export interface GenerateStatementReturnType {
  statement: StatementSummary;
  /** `sha256:<hex>` of the exported bytes. */
  contentHash: string;
  export: StatementExportInfo;
  /** False when an identical export was stored before (the object was left as it was). */
  created: boolean;
  /** For `csv`: the exported bytes as text (the balance table is small); null for `json`. */
  csv: string | null;
}

/**
 * The period a label names, checked against the clock: a period that has not begun yet is
 * refused (its statement could only be empty, and would change once it begins).
 * Throws INVALID_REQUEST naming `period`.
 */
export function resolveStatementPeriod(label: string, now: Date): StatementPeriod {
  const period = parseStatementPeriod(label);
  if (!period) {
    throw invalidRequest(
      `Invalid querystring: period ${JSON.stringify(label)} is not a real UTC month (YYYY-MM) or UTC day ` +
        `(YYYY-MM-DD) from 1970 on.`,
    );
  }
  if (period.start.getTime() > now.getTime()) {
    throw invalidRequest(
      `Invalid querystring: period ${label} has not begun (it starts ${period.start.toISOString()}).`,
      { remediation: 'Ask for the current or a past UTC month or day.' },
    );
  }
  return period;
}

/** The object key of an export: `statements/<account_id>/<sha256 hex>.<json|csv>`. */
export function statementObjectKey(accountId: string, sha256Hex: string, format: StatementFormat): string {
  return `statements/${accountId}/${sha256Hex}.${format}`;
}

export function statementDownloadPath(contentHash: string): string {
  return `/v1/statements/exports/${contentHash}`;
}

function storeUnavailable(err: unknown): never {
  if (err instanceof ObjectStoreError) {
    throw unavailable(`The statement store failed: ${err.message}. Nothing was stored.`, {
      remediation: 'Retry in a moment; if it persists, the operator should check the statement store.',
      cause: err,
    });
  }
  throw err;
}

/**
 * Generates the statement of `wallet` for `period` in `format`, stores it as an immutable,
 * content-addressed object and records the export for the account. Same inputs over the same
 * ledger range: the same bytes, hash and key (the stored object is then left as it is).
 * Throws INVALID_REQUEST (wallet or period), UNAVAILABLE (the store failed; nothing recorded),
 * DEADLINE_EXCEEDED (from `options.deadline`; nothing stored).
 */
export async function generateStatement(
  deps: GenerateStatementDeps,
  params: GenerateStatementParameters,
  options: GenerateStatementOptions = {},
): Promise<GenerateStatementReturnType> {
  if (!ADDRESS.test(params.wallet)) {
    throw invalidRequest(
      'Invalid querystring: wallet must be an address (0x followed by 40 hex characters).',
    );
  }
  const period = resolveStatementPeriod(params.period, deps.clock.now());
  const scope = statementScope(params.accountId, params.wallet, period, SUPPORTED_CHAINS);
  const batchSize = options.batchSize ?? STATEMENT_BATCH_SIZE;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be positive');

  const registry = deps.tokenRegistry;

  const staged = await deps.objectStore.stage().catch(storeUnavailable);
  let csv: string | null = null;
  try {
    const statement = await deps.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (tx) => {
        const rows = await readStatementBalances(tx, scope);
        const summary = buildStatementSummary(scope, period, rows, registry);
        if (params.format === 'csv') {
          csv = renderStatementCsv(summary);
          await staged.write(csv);
          return summary;
        }
        await staged.write(STATEMENT_JSON_HEAD);
        await streamEntries(staged, summary, async (afterSeq) => {
          options.deadline?.check('reading the next batch of statement entries');
          const batch = await readStatementEntryBatch(tx, scope, rows, afterSeq, batchSize);
          if (batch) options.onBatch?.(batch.count);
          return batch;
        });
        await staged.write(statementJsonTail(summary));
        return summary;
      });
    const { bytes, sha256Hex } = await staged.seal().catch(storeUnavailable);
    const key = statementObjectKey(params.accountId, sha256Hex, params.format);
    const contentType = STATEMENT_CONTENT_TYPES[params.format];
    const { created } = await staged.commit(key, contentType).catch(storeUnavailable);
    const contentHash = `sha256:${sha256Hex}`;
    await recordStatementExport(deps.db, {
      accountId: params.accountId,
      contentHash,
      format: params.format,
      wallet: scope.wallet,
      period: period.label,
      objectKey: key,
      bytes,
      firstSeq: statement.ledger_range.first_seq,
      lastSeq: statement.ledger_range.last_seq,
      createdAt: deps.clock.now(),
    });
    return {
      statement,
      contentHash,
      export: {
        format: params.format,
        key,
        bytes,
        contentType,
        bucketBound: deps.objectStore.kind === 's3',
        downloadPath: statementDownloadPath(contentHash),
      },
      created,
      csv,
    };
  } catch (err) {
    await staged.discard().catch(() => undefined);
    throw err;
  }
}

/**
 * Writes the entries batch by batch (keyset on seq), comma-separated. The count must match the
 * balance table's: both come from one snapshot, so a mismatch is a bug, never a race.
 */
async function streamEntries(
  staged: StagedObject,
  summary: StatementSummary,
  nextBatch: (afterSeq: number) => Promise<StatementEntryBatch | null>,
): Promise<void> {
  let written = 0;
  let afterSeq = (summary.ledger_range.first_seq ?? 1) - 1;
  while (written < summary.entry_count) {
    const batch = await nextBatch(afterSeq);
    if (!batch) break;
    await staged.write(written === 0 ? batch.json : `,${batch.json}`);
    written += batch.count;
    afterSeq = batch.lastSeq;
  }
  if (written !== summary.entry_count) {
    throw new Error(
      `statement: streamed ${written} entries, the balance table counts ${summary.entry_count}`,
    );
  }
}
