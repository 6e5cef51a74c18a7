// The OpenAPI examples of the rebalance routes: 1,000 USDC from Base to Polygon by the treasury
// executor, a standard transfer (no fee) under the executor wallet's policy version 2.

const ID = '4b1e9c70-2d8a-4f63-a5c1-7e90d3b28f14';
const POLICY_HASH = 'c3a91f0d6e2b4875a1f9c0d3e6b28a74f51d9c02e8b7a6f4d3c1b0a9e8f7d6c5';
const BURN_TX = '0x5e0c9b1f7a3d2e4c6b8a0f1e3d5c7b9a2e4f6c8d0b1a3e5f7c9d2b4a6e8f0c1d';
const MINT_TX = '0x9a2c4e6f8b0d1f3a5c7e9b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a';

export const CREATE_REBALANCE_BODY = { from_chain_id: 8453, to_chain_id: 137, amount: '1000000000' };
export const REBALANCE_ID_PARAMS = { id: ID };

const base = {
  id: ID,
  from_chain_id: 8453,
  to_chain_id: 137,
  amount: '1000000000',
  finality: 'standard' as const,
  max_fee: '0',
  policy_version: 2,
  policy_hash: POLICY_HASH,
  created_at: '2026-11-26T09:00:00.000Z',
};

export const PLANNED_REBALANCE = {
  ...base,
  status: 'planned' as const,
  phase: 'burn_pending' as const,
  burn_tx: null,
  mint_tx: null,
  report: {},
  updated_at: '2026-11-26T09:00:00.000Z',
};

export const AWAITING_REBALANCE = {
  ...base,
  status: 'executing' as const,
  phase: 'awaiting_attestation' as const,
  burn_tx: BURN_TX,
  mint_tx: null,
  report: { gas_wei: { '8453': '184203000000' } },
  updated_at: '2026-11-26T09:01:00.000Z',
};

export const MINTED_REBALANCE = {
  ...base,
  status: 'filled' as const,
  phase: 'minted' as const,
  burn_tx: BURN_TX,
  mint_tx: MINT_TX,
  report: { fee: '0', minted: '1000000000', gas_wei: { '8453': '184203000000', '137': '2561902000000000' } },
  updated_at: '2026-11-26T09:20:00.000Z',
};
