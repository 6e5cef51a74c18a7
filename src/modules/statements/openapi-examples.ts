// The OpenAPI examples of the statement routes: March 2026 of a Base smart account whose only entry
// is a deposit of 1,000 USDC. The content hashes and sizes are those of the exports these
// summaries give (the JSON export with STATEMENT_EXAMPLE_ENTRY, the CSV balance table below);
// statements.test.ts checks them.

const WALLET = '0x9bf338818ba7cf5c658d5182349c51c4d4528579';
const ACCOUNT_ID = 'acc_7k2m9q4x1c8v5n3b6z0d';
const USDC_ASSET = 'eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const JSON_HEX = 'd98e86f65b1cf82ac531bc645553e85fcca27863ac572666691df34191c84503';
const JSON_BYTES = 1016;
const CSV_HEX = '5ca0f2a4d1f5e86b2d98acba0803fc0a8a582679f9f1621de7fe5f2485897d92';

export const STATEMENT_QUERY = {
  wallet: '0x9Bf338818BA7cf5C658d5182349c51C4D4528579',
  period: '2026-03',
  format: 'json' as const,
};

/** The one entry of the example's JSON export (the deposit). */
export const STATEMENT_EXAMPLE_ENTRY = {
  amount: '1000000000',
  asset: USDC_ASSET,
  created_at: '2026-03-02T09:00:00.000Z',
  group_id: 'lgr_4f8k2n7q1x9c3v6b0m5z',
  kind: 'deposit',
  ledger_account: `wallet:8453:${WALLET}`,
  policy_hash: null,
  reverses: null,
  seq: 1042,
  settlement_id: 'prefund:8453:0x5e1c0b7a39d4f2e86a1c3b5d7f9e0a2c4b6d8f0e1a3c5b7d9f2e4a6c8b0d1f3e',
};

export const STATEMENT_ANSWER = {
  statement: {
    format_version: 2 as const,
    wallet: WALLET,
    period: { label: '2026-03', start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' },
    ledger_range: { first_seq: 1042, last_seq: 1042 },
    balances: [
      {
        ledger_account: `wallet:8453:${WALLET}`,
        asset: USDC_ASSET,
        symbol: 'USDC',
        decimals: 6,
        opening: '0',
        debits: '1000000000',
        credits: '0',
        closing: '1000000000',
        entry_count: 1,
        first_seq: 1042,
        last_seq: 1042,
      },
    ],
    fees_usd: '0.000000',
    entry_count: 1,
  },
  content_hash: `sha256:${JSON_HEX}`,
  export: {
    format: 'json' as const,
    key: `statements/${ACCOUNT_ID}/${JSON_HEX}.json`,
    bytes: JSON_BYTES,
    content_type: 'application/json; charset=utf-8',
    bucket_bound: false,
    download_path: `/v1/statements/exports/sha256:${JSON_HEX}`,
  },
};

/** The same statement's export with `format=csv`: the balance table. */
export const CSV_EXPORT_PARAMS = { content_hash: `sha256:${CSV_HEX}` };
export const CSV_EXPORT =
  'wallet,period,period_start,period_end,ledger_account,asset,symbol,decimals,opening,debits,credits,' +
  'closing,entry_count,first_seq,last_seq\r\n' +
  `${WALLET},2026-03,2026-03-01T00:00:00.000Z,2026-04-01T00:00:00.000Z,wallet:8453:${WALLET},${USDC_ASSET},` +
  'USDC,6,0,1000000000,0,1000000000,1,1042,1042\r\n';
