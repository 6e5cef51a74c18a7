// The OpenAPI examples of the statement routes: March 2026 of a Base smart account whose only entry
// is a deposit of 1,000 USDC. The content hashes and sizes are those of the exports these
// summaries give (the JSON export with its one entry, the CSV balance table below).

const WALLET = '0x9bf338818ba7cf5c658d5182349c51c4d4528579';
const ACCOUNT_ID = 'acc_7k2m9q4x1c8v5n3b6z0d';
const USDC_ASSET = 'eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const JSON_HEX = '0ca11ad211c2f1b2a19e5909fece0ae7866c4b217298e82122fa137e2a217d9c';
const CSV_HEX = 'c7ea15540a32c819de9f8acb01736d9c0457c55346919c2fe6b80012dcbed49e';

export const STATEMENT_QUERY = {
  wallet: '0x9Bf338818BA7cf5C658d5182349c51C4D4528579',
  period: '2026-03',
  format: 'json' as const,
};

export const STATEMENT_ANSWER = {
  statement: {
    wallet: WALLET,
    period: { label: '2026-03', start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' },
    ledger_range: { first_seq: 1042, last_seq: 1042 },
    balances: [
      {
        ledger_account: `wallet:8453:${WALLET}`,
        asset: USDC_ASSET,
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
    bytes: 960,
    content_type: 'application/json; charset=utf-8',
    bucket_bound: false,
    download_path: `/v1/statements/exports/sha256:${JSON_HEX}`,
  },
};

/** The same statement's export with `format=csv`: the balance table. */
export const CSV_EXPORT_PARAMS = { content_hash: `sha256:${CSV_HEX}` };
export const CSV_EXPORT =
  'wallet,period,period_start,period_end,ledger_account,asset,opening,debits,credits,closing,entry_count,' +
  'first_seq,last_seq\r\n' +
  `${WALLET},2026-03,2026-03-01T00:00:00.000Z,2026-04-01T00:00:00.000Z,wallet:8453:${WALLET},${USDC_ASSET},` +
  '0,1000000000,0,1000000000,1,1042,1042\r\n';
