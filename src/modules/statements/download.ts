// Reading back a stored export: only one the caller's account generated.

import type { Readable } from 'node:stream';
import type { ObjectStore } from '../../adapters/object-store/port.ts';
import { ObjectStoreError } from '../../adapters/object-store/port.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { notFound, unavailable } from '../../core/errors/app-error.ts';
import { STATEMENT_CONTENT_TYPES } from './generate.ts';
import { findStatementExport, type StatementExportRecord } from './store.ts';

export interface OpenStatementExportReturnType {
  record: StatementExportRecord;
  contentType: string;
  body: Readable;
  bytes: number;
}

/**
 * The stored bytes of the account's export with this content hash. Throws NOT_FOUND when the
 * account generated no such export (another account's included) or its object is gone, and
 * UNAVAILABLE when the store fails.
 */
export async function openStatementExport(
  deps: { db: DbExecutor; objectStore: ObjectStore },
  accountId: string,
  contentHash: string,
): Promise<OpenStatementExportReturnType> {
  const record = await findStatementExport(deps.db, accountId, contentHash);
  if (!record) {
    throw notFound(`No statement export ${contentHash} on this account.`, {
      remediation: 'Generate it with GET /v1/statements; its answer names the download path.',
    });
  }
  const object = await deps.objectStore.get(record.objectKey).catch((err: unknown) => {
    if (err instanceof ObjectStoreError) {
      throw unavailable(`The statement store failed: ${err.message}.`, { cause: err });
    }
    throw err;
  });
  if (!object) {
    throw notFound(`The stored object of statement export ${contentHash} is gone.`, {
      remediation: 'Generate the statement again with GET /v1/statements (same wallet and period).',
      next: [{ method: 'GET', path: '/v1/statements', why: 'regenerate the export' }],
    });
  }
  return {
    record,
    contentType: STATEMENT_CONTENT_TYPES[record.format],
    body: object.body,
    bytes: object.bytes,
  };
}

/** The whole stream as UTF-8 text. */
export async function readStreamText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
