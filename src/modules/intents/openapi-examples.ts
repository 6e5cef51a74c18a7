// The OpenAPI examples of the intent routes: a conversion of 250 USDC to WETH on Base by a smart
// account whose policy (version 1) allows Uniswap v3 only. `policy_hash` is that policy's hash as
// policies store it (bare SHA-256 hex); `fee_usd` is the default conversion fee.

const WALLET = '0x9bf338818ba7cf5c658d5182349c51c4d4528579';
const INTENT_ID = '7d2f4a91-3c6e-4b8d-9f15-a0e8c2b47d36';

export const CREATE_INTENT_BODY = {
  wallet: '0x9Bf338818BA7cf5C658d5182349c51C4D4528579',
  kind: 'conversion' as const,
  sell_token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  buy_token: '0x4200000000000000000000000000000000000006',
  sell_amount: '250000000',
  max_slippage_bps: 30,
};

export const PLANNED_INTENT = {
  id: INTENT_ID,
  wallet: WALLET,
  kind: 'conversion' as const,
  status: 'planned' as 'planned' | 'cancelled',
  policy_version: 1,
  policy_hash: '48e7a2f83ac99bf7654dd72417bdba8328f2ad6bca000569692cbed8adec7cd7',
  params: {
    chain_id: 8453,
    sell_token: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    buy_token: '0x4200000000000000000000000000000000000006',
    sell_amount: '250000000',
    max_slippage_bps: 30,
    venues: ['uniswap-v3'],
    value_usd: '250',
    fee_usd: '0.05',
  },
  report: {},
  created_at: '2026-03-14T10:02:17.554Z',
  updated_at: '2026-03-14T10:02:17.554Z',
};

/** Cancelled while planned: its reservation released and its fee reversed (`fee_usd` is what was charged). */
export const CANCELLED_INTENT = {
  ...PLANNED_INTENT,
  status: 'cancelled' as const,
  updated_at: '2026-03-14T10:02:41.930Z',
};

export const INTENT_ID_PARAMS = { id: INTENT_ID };
export const LIST_INTENTS_QUERY = { wallet: CREATE_INTENT_BODY.wallet, limit: 50, offset: 0 };
