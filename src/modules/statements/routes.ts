import type { ObjectStore } from '../../adapters/object-store/port.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import { requirePrincipal } from '../../core/http/actor.ts';
import {
  defineRoute,
  type ResourceWalletLocator,
  type RouteDefinition,
} from '../../core/http/route-table.ts';
import type { AppDeps } from '../../deps.ts';
import { openStatementExport } from './download.ts';
import { generateStatement } from './generate.ts';
import { CSV_EXPORT, CSV_EXPORT_PARAMS, STATEMENT_ANSWER, STATEMENT_QUERY } from './openapi-examples.ts';
import {
  STATEMENT_CSV_HEADERS,
  StatementExportBody,
  StatementExportParams,
  StatementOkResponse,
  StatementQuery,
} from './schemas.ts';
import { findStatementExport } from './store.ts';

const TAGS = ['statements'];
/** A statement of a busy wallet reads many entries; it stops (storing nothing) past this budget. */
const STATEMENT_BUDGET_MS = 120_000;

function objectStoreOf(deps: AppDeps): ObjectStore {
  if (!deps.objectStore) throw unavailable('No statement store is configured on this server.');
  return deps.objectStore;
}

/** The guard's locator for `/v1/statements/exports/{content_hash}`: the export's wallet. */
const EXPORT_WALLET: ResourceWalletLocator = {
  in: 'resource',
  resource: 'statement export',
  resolve: async (db, accountId, params) => {
    const hash = params['content_hash'];
    if (typeof hash !== 'string') return null;
    return (await findStatementExport(db, accountId, hash))?.wallet ?? null;
  },
};

export const statementsRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/statements',
    operationId: 'getStatement',
    summary: "A wallet's statement for a UTC month or day, exported as an immutable object",
    description:
      'Covers the entries of the wallet’s ledger accounts (`wallet:<chain>:<address>`, every chain) in the ' +
      'account’s groups, and the fees charged for the wallet’s actions (docs/statements.md). With ' +
      '`format=json` (the default) returns the summary (never the entries), the SHA-256 of the exported ' +
      'bytes and where they are stored. With `format=csv` returns the CSV balance table itself ' +
      '(`text/csv; charset=utf-8`), byte for byte the stored export, with its hash in `x-content-hash` ' +
      '(and `etag`) and its download path in `content-location`. The same wallet and period over the same ' +
      'ledger range always give byte-identical content and the same hash; the export is content-addressed ' +
      'and immutable.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'query', field: 'wallet' },
    budgetMs: STATEMENT_BUDGET_MS,
    schema: { querystring: StatementQuery, response: { 200: StatementOkResponse } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when: '`period` is not a real UTC month or day from 1970 on, or has not begun yet',
        },
        {
          code: 'UNAVAILABLE',
          when: 'no statement store is configured, or the store failed (nothing was stored)',
        },
      ],
      responses: {
        200:
          'format=json: the summary, the content hash and where the export is stored; format=csv: the CSV ' +
          'balance table itself, with its hash and download path in headers.',
      },
      example: { query: STATEMENT_QUERY, status: 200, response: STATEMENT_ANSWER },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      const objectStore = objectStoreOf(ctx.deps);
      const result = await generateStatement(
        {
          db: ctx.deps.db,
          clock: ctx.deps.clock,
          objectStore,
          tokenRegistry: ctx.deps.tokenRegistry,
        },
        {
          accountId: principal.accountId,
          wallet: ctx.query.wallet,
          period: ctx.query.period,
          format: ctx.query.format ?? 'json',
        },
        { deadline: ctx.deadline },
      );
      if (result.csv !== null) {
        // The table itself: the exact bytes stored and hashed.
        return {
          status: 200,
          body: null,
          raw: { text: result.csv, contentType: result.export.contentType },
          headers: {
            'cache-control': 'no-store',
            [STATEMENT_CSV_HEADERS.contentHash]: result.contentHash,
            [STATEMENT_CSV_HEADERS.location]: result.export.downloadPath,
            etag: `"${result.contentHash.slice('sha256:'.length)}"`,
          },
        };
      }
      return {
        status: 200,
        body: {
          statement: result.statement,
          content_hash: result.contentHash,
          export: {
            format: result.export.format,
            key: result.export.key,
            bytes: result.export.bytes,
            content_type: result.export.contentType,
            bucket_bound: result.export.bucketBound,
            download_path: result.export.downloadPath,
          },
        },
        headers: { 'cache-control': 'no-store' },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/statements/exports/{content_hash}',
    operationId: 'getStatementExport',
    summary: 'The stored bytes of a statement export this account generated',
    description:
      '`content_hash` is the `sha256:<hex>` that GET /v1/statements returned. Another account’s export, ' +
      'or one never generated, is 404. The body is the export byte for byte (its SHA-256 is the hash).',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: EXPORT_WALLET,
    schema: { params: StatementExportParams, response: { 200: StatementExportBody } },
    docs: {
      errors: [
        {
          code: 'NOT_FOUND',
          when: 'this account generated no export with this hash, or its stored object is gone',
        },
        { code: 'UNAVAILABLE', when: 'no statement store is configured, or the store failed' },
      ],
      responses: { 200: 'The stored export, byte for byte (JSON or CSV, as generated).' },
      example: { params: CSV_EXPORT_PARAMS, status: 200, response: CSV_EXPORT },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      const stored = await openStatementExport(
        { db: ctx.deps.db, objectStore: objectStoreOf(ctx.deps) },
        principal.accountId,
        ctx.params.content_hash,
      );
      const hex = stored.record.contentHash.slice('sha256:'.length);
      return {
        status: 200,
        body: null,
        // The stored object's stream, piped to the client as it is read (never held whole).
        raw: { text: stored.body, contentType: stored.contentType },
        headers: {
          etag: `"${hex}"`,
          'cache-control': 'private, max-age=31536000, immutable',
          'content-disposition':
            `attachment; filename="statement-${stored.record.wallet}-${stored.record.period}.` +
            `${stored.record.format}"`,
        },
      };
    },
  }),
];
