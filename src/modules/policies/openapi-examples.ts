// The OpenAPI examples of the policy routes: the first policy of a Base smart account that allows
// Uniswap v3 only and raises the per-transaction cap. `POLICY_HASH` is policyHash() of the stored
// document below (SHA-256 of its RFC 8785 canonical JSON, bare lowercase hex).

const WALLET = '0x9bf338818ba7cf5c658d5182349c51c4d4528579';

export const POLICY_HASH = '48e7a2f83ac99bf7654dd72417bdba8328f2ad6bca000569692cbed8adec7cd7';

export const PUT_POLICY_BODY = {
  version: 1 as const,
  wallet: '0x9Bf338818BA7cf5C658d5182349c51C4D4528579',
  chain_id: 8453 as const,
  execution: { max_slippage_bps: 50, venues: ['uniswap-v3' as const] },
  spend: { per_tx_usd: '250', daily_usd: '2000', token_allowlist: ['USDC', 'WETH'] },
};

/** The platform defaults of Base (chain 8453) in production. */
export const BASE_DEFAULTS = {
  float: { min_usd: '0', target_usd: '0' },
  execution: {
    max_slippage_bps: 50,
    venues: ['0x' as const, 'kyberswap' as const, 'aerodrome' as const, 'uniswap-v3' as const],
    deadline_minutes: 30,
  },
  gas: { enabled: true, max_top_up_usd: '5' },
  stables: { accepted: ['USDC'], max_depeg_bps: 100 },
  spend: {
    per_tx_usd: '100',
    daily_usd: '1000',
    velocity_per_hour: 30,
    token_allowlist: ['USDC', 'WETH', 'EURC'],
    screening_required_above_usd: '0',
  },
  alerts: { daily_usage_pct: 80, on_refusal: true },
  prediction_markets: {
    enabled: false,
    venues: ['polymarket' as const],
    max_order_usd: '25',
    max_exposure_usd: '250',
  },
  rebalance: { enabled: false, corridors: [], min_transfer_usd: '10', max_transfer_usd: '10000' },
};

export const POLICY_RECORD = {
  wallet: WALLET,
  version: 1,
  hash: POLICY_HASH,
  created_at: '2026-03-14T09:12:45.318Z',
  document: {
    version: 1 as const,
    wallet: WALLET,
    chain_id: 8453 as const,
    ...BASE_DEFAULTS,
    execution: { max_slippage_bps: 50, venues: ['uniswap-v3' as const], deadline_minutes: 30 },
    spend: {
      ...BASE_DEFAULTS.spend,
      per_tx_usd: '250',
      daily_usd: '2000',
      token_allowlist: ['USDC', 'WETH'],
    },
  },
  defaulted: [
    'float',
    'execution.deadline_minutes',
    'gas',
    'stables',
    'spend.velocity_per_hour',
    'spend.screening_required_above_usd',
    'alerts',
    'prediction_markets',
    'rebalance',
  ],
};

export const CHECK_BODY = {
  wallet: '0x9Bf338818BA7cf5C658d5182349c51C4D4528579',
  kind: 'conversion' as const,
  amount_usd: '250',
  sell_token: 'USDC',
  buy_token: 'WETH',
  slippage_bps: 30,
};

/** The check of CHECK_BODY against POLICY_RECORD with 150 USD spent today in two actions this hour. */
export const CHECK_RESULT = {
  wallet: WALLET,
  policy_version: 1,
  policy_hash: POLICY_HASH,
  allowed: true,
  refusal: null,
  rules: [
    { rule: 'chain_id', pass: true, limit: 8453, value: 8453, code: 'POLICY_VIOLATION' },
    {
      rule: 'spend.token_allowlist',
      pass: true,
      limit: ['USDC', 'WETH'],
      value: ['USDC', 'WETH'],
      code: 'POLICY_VIOLATION',
    },
    {
      rule: 'stables.accepted',
      pass: true,
      limit: ['USDC'],
      value: ['USDC', 'WETH'],
      code: 'BUDGET_EXCEEDED',
    },
    { rule: 'execution.venues', pass: true, limit: ['uniswap-v3'], value: null, code: 'POLICY_VIOLATION' },
    { rule: 'execution.max_slippage_bps', pass: true, limit: 50, value: 30, code: 'POLICY_VIOLATION' },
    { rule: 'spend.per_tx_usd', pass: true, limit: '250', value: '250', code: 'BUDGET_EXCEEDED' },
    { rule: 'spend.daily_usd', pass: true, limit: '2000', value: '400', code: 'BUDGET_EXCEEDED' },
    { rule: 'spend.velocity_per_hour', pass: true, limit: 30, value: 3, code: 'BUDGET_EXCEEDED' },
  ],
};
