import { Type } from 'typebox';
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
          '`json`: the summary and every entry in one canonical JSON document. `csv`: the balance table.',
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
  { additionalProperties: false },
);

export const StatementExportParams = Type.Object(
  { content_hash: Type.String({ pattern: CONTENT_HASH_PATTERN }) },
  { additionalProperties: false },
);

export const StatementExportBody = Type.String({
  description: 'The stored export, byte for byte: a JSON document or a CSV table (see content type)',
});
