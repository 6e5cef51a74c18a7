import { Type } from 'typebox';
import { STATEMENT_DOCUMENT_VERSION } from './content.ts';
import { PERIOD_PATTERN } from './period.ts';

export const STATEMENT_FORMATS = ['json', 'csv'] as const;
export const CONTENT_HASH_PATTERN = '^sha256:[0-9a-f]{64}$';

const SEQ = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);
const SIGNED_AMOUNT = Type.String({ pattern: '^-?[0-9]+$' });
const AMOUNT = Type.String({ pattern: '^[0-9]+$' });

export const StatementQuery = Type.Object(
  {
    wallet: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'The wallet (any letter case).' }),
    period: Type.String({
      pattern: PERIOD_PATTERN,
      description:
        '`YYYY-MM` (a UTC calendar month) or `YYYY-MM-DD` (a UTC calendar day), from 1970 on; a period ' +
        'that has not begun is refused.',
    }),
    format: Type.Optional(
      Type.Enum([...STATEMENT_FORMATS], {
        default: 'json',
        description:
          '`json` (the default): the answer is the summary, and the export is one canonical JSON document ' +
          'with every entry. `csv`: the answer is the export itself, the balance table as CSV.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const StatementBalanceSchema = Type.Object(
  {
    ledger_account: Type.String({
      description: '`wallet:<chain>:<address>` or `account:<id>:prepaid` (fees)',
    }),
    asset: Type.String({ description: 'CAIP-19 asset id, or `USD` (micro-USD)' }),
    symbol: Type.Union([Type.String(), Type.Null()], {
      description:
        'The token registry’s symbol of an ERC-20 (`USDC`, `USDC.E`), `USD` for USD, the native coin’s ' +
        '(`ETH`, `POL`); null for a prediction-market share and for an asset the registry does not know',
    }),
    decimals: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description:
        'Decimals of the base units: the registry’s for an ERC-20, 6 for USD and for prediction-market ' +
        'shares (micro shares), 18 for a native coin; null for an asset the registry does not know',
    }),
    opening: Type.String({
      pattern: '^-?[0-9]+$',
      description: 'Base units (micro-USD for USD), debit positive: the sum of the entries before the period',
    }),
    debits: AMOUNT,
    credits: AMOUNT,
    closing: SIGNED_AMOUNT,
    entry_count: Type.Integer({ minimum: 0 }),
    first_seq: SEQ,
    last_seq: SEQ,
  },
  { additionalProperties: false },
);

export const StatementSchema = Type.Object(
  {
    format_version: Type.Literal(STATEMENT_DOCUMENT_VERSION, {
      description:
        'The statement format: 2 gives each balance row its `symbol` and `decimals` (version 1, without ' +
        'them, had no `format_version`); the JSON export’s `version`',
    }),
    wallet: Type.String(),
    period: Type.Object(
      {
        label: Type.String(),
        start: Type.String({ format: 'date-time', description: 'Inclusive' }),
        end: Type.String({ format: 'date-time', description: 'Exclusive' }),
      },
      { additionalProperties: false },
    ),
    ledger_range: Type.Object(
      { first_seq: SEQ, last_seq: SEQ },
      {
        additionalProperties: false,
        description: 'Ledger positions of the first and last included entry (null when there is none)',
      },
    ),
    balances: Type.Array(StatementBalanceSchema),
    fees_usd: Type.String({
      description: 'Fees charged for the wallet’s actions in the period, net of refunds',
    }),
    entry_count: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export const StatementResponse = Type.Object(
  {
    statement: StatementSchema,
    content_hash: Type.String({
      pattern: CONTENT_HASH_PATTERN,
      description: 'SHA-256 of the exported bytes',
    }),
    export: Type.Object(
      {
        format: Type.Enum([...STATEMENT_FORMATS]),
        key: Type.String({ description: 'Object key: `statements/<account_id>/<sha256 hex>.<format>`' }),
        bytes: Type.Integer({ minimum: 1 }),
        content_type: Type.String(),
        bucket_bound: Type.Boolean({
          description: 'Stored in an S3 bucket (else in the service’s directory)',
        }),
        download_path: Type.String({ description: 'GET it with the same credential' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'Statement' },
);

export const StatementExportParams = Type.Object(
  { content_hash: Type.String({ pattern: CONTENT_HASH_PATTERN }) },
  { additionalProperties: false },
);

export const StatementExportBody = Type.String({
  description: 'The stored export, byte for byte: a JSON document or a CSV table (see content type)',
});

export const StatementCsvBody = Type.String({
  description:
    'format=csv: the balance table, byte for byte the stored export (RFC 4180, CRLF line ends, a header row, ' +
    'one row per ledger account and asset)',
});

/** Headers of a `format=csv` answer: the export's hash and where it is stored. */
export const STATEMENT_CSV_HEADERS = {
  contentHash: 'x-content-hash',
  location: 'content-location',
} as const;

/**
 * The 200 of GET /v1/statements: the JSON summary (the default), or with `format=csv` the CSV
 * balance table itself, with the export's hash and download path in headers.
 */
export const StatementOkResponse = {
  description:
    'format=json (the default): the summary, the content hash and the export. format=csv: the CSV balance ' +
    'table itself (text/csv), with its content hash and download path in headers.',
  headers: {
    [STATEMENT_CSV_HEADERS.contentHash]: Type.String({
      pattern: CONTENT_HASH_PATTERN,
      description: 'format=csv only: `sha256:<hex>` of the body, the stored export’s content hash',
    }),
    [STATEMENT_CSV_HEADERS.location]: Type.String({
      description: 'format=csv only: the stored export’s download path (/v1/statements/exports/sha256:<hex>)',
    }),
    etag: Type.String({ description: 'format=csv only: the body’s SHA-256 (hex), quoted' }),
  },
  content: {
    'application/json': { schema: StatementResponse },
    'text/csv': { schema: StatementCsvBody },
  },
};
