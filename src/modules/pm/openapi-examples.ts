// The OpenAPI examples of the prediction-market credential routes: a Polymarket credential of the
// client-signed flow for a Safe funder (signature type 2), its L2 key given by the caller.

const ID = '8c3f2a61-5d4e-4b7a-9f10-2e6d8b4c1a97';

export const STORE_CREDENTIAL_BODY = {
  venue: 'polymarket',
  label: 'main trading Safe',
  signature_type: 2,
  funder: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c',
  signer_address: '0x3f5ce5fbfe3e9af3971dd833d26ba9b5c936f0be',
  api_key: '1f8e4c2a-7b3d-4e9f-a6c5-0d2b8e1f3a47',
  api_secret: 'c2VjcmV0LW9mLXRoZS1leGFtcGxlLW9ubHk=',
  api_passphrase: '5d1c0e9b8a7f6e5d4c3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b',
};

export const CREDENTIAL_ID_PARAMS = { id: ID };

export const STORED_CREDENTIAL = {
  id: ID,
  venue: 'polymarket' as const,
  label: 'main trading Safe',
  meta: {
    flow: 'client_signed',
    signature_type: 2,
    signature_type_name: 'POLY_GNOSIS_SAFE',
    signer_address: '0x3f5ce5fbfe3e9af3971dd833d26ba9b5c936f0be',
    funder: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c',
    api_key_hint: '…3a47',
    last_used_at: '2026-11-26T09:00:00.000Z',
  },
  created_at: '2026-11-26T09:00:00.000Z',
  revoked_at: null,
};

export const REVOKED_CREDENTIAL = { ...STORED_CREDENTIAL, revoked_at: '2026-11-26T10:00:00.000Z' };

export const VERIFIED_CREDENTIAL = {
  credential: {
    ...STORED_CREDENTIAL,
    meta: { ...STORED_CREDENTIAL.meta, last_used_at: '2026-11-26T09:30:00.000Z' },
  },
  accepted: true,
  reason: null,
  checked_at: '2026-11-26T09:30:00.000Z',
};

const SAFE = '0x5A0b54D5dc17e0AadC383d2db43B0a0D3E029c4c';
const SIGNER = '0x3f5CE5FBFe3E9af3971dD833D26bA9b5C936f0bE';
const NEW_SIGNER = '0x8Ba1f109551bD432803012645Ac136ddd64DBA72';

export const ONBOARDING_PARAMS = { address: SAFE };

export const ONBOARDING_STATUS = {
  address: SAFE,
  trade_ready: false,
  approvals: [
    {
      id: 'pusd_allowance_ctf_exchange',
      description: 'pUSD allowance for the CTF Exchange V2 (0xe111180000d2663c0091e4f400237545b87b996b)',
      approved: true,
      call: null,
    },
    {
      id: 'ctf_operator_neg_risk_adapter',
      description:
        'Conditional-tokens operator approval for the NegRisk Adapter (0xd91e80cf2e7be2e162c6513ced06f1dd0da35296)',
      approved: false,
      call: {
        to: '0x4d97dcd97ec945f40cf65f87097ace5ea0476045',
        data: '0xa22cb465000000000000000000000000d91e80cf2e7be2e162c6513ced06f1dd0da352960000000000000000000000000000000000000000000000000000000000000001',
      },
    },
  ],
  collateral: {
    pusd: '250000000',
    usdce_unwrapped: '0',
    wrap_calls: null,
  },
  collateral_note: 'Polymarket’s V2 collateral is pUSD, backed 1:1 by USDC.e … (abridged)',
};

export const FUNDER_PARAMS = { owner: SIGNER };

export const FUNDER_LOOKUP = {
  owner: SIGNER,
  funder: SAFE,
  candidates: [
    { address: SAFE, grants_set: 6, trade_ready: true, pusd: '250000000', usdce_unwrapped: '0' },
    {
      address: '0x1e2F3a4B5c6D7e8F9a0B1c2D3e4F5a6B7c8D9e0F',
      grants_set: 0,
      trade_ready: false,
      pusd: '0',
      usdce_unwrapped: '0',
    },
  ],
};

export const ROTATION_QUERY = { new_owner: NEW_SIGNER };

export const ROTATION_CALLDATA = {
  credential_id: ID,
  venue: 'polymarket' as const,
  funder: SAFE,
  old_owner: SIGNER,
  new_owner: NEW_SIGNER,
  prev_owner: '0x0000000000000000000000000000000000000001',
  call: {
    to: SAFE,
    data:
      '0xe318b52b0000000000000000000000000000000000000000000000000000000000000001' +
      '0000000000000000000000003f5ce5fbfe3e9af3971dd833d26ba9b5c936f0be' +
      '0000000000000000000000008ba1f109551bd432803012645ac136ddd64dba72',
    value: '0' as const,
  },
  sequence: [
    'Execute call from the Safe … (abridged)',
    'Derive or create the CLOB API key of the new owner and store it … (abridged)',
    `Revoke this credential: DELETE /v1/pm/credentials/${ID}.`,
    "Delete the old signer's API key at the CLOB … (abridged)",
  ],
  rotation_policy: 'Rotate the signer of a funder Safe at least every 90 days … (abridged)',
};

export const WRAP_BODY = { credential_id: ID, amount_base_units: '100000000' };

export const WRAP_RESULT = {
  wrapped_base_units: '100000000',
  txs: [
    '0x3c1f5e7a9b2d4c6e8f0a1b3c5d7e9f2a4b6c8d0e1f3a5b7c9d2e4f6a8b0c1d3e',
    '0x7d9f1b3c5e7a9c2e4f6b8d0a1c3e5f7b9d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c',
  ],
  collateral: { pusd: '350000000', usdce_unwrapped: '0' },
};

const CONDITION = '0x5f65177b394277fd294cd75650044e32ba009a95022d88a0c1d565897d72f8f1';
const ORDER_ID = '0x8d1a3f5c7e9b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f';

export const PLACE_ORDER_BODY = {
  wallet: SAFE,
  credential_id: ID,
  condition_id: CONDITION,
  token_id: '71321045679252212594626385532706912750332728571942532289631379312455583992563',
  action: 'buy',
  price_usd: '0.42',
  size_shares: '50',
  client_order_id: 'agent-7-2026-11-26-0001',
  state: { thesis: 'polls moved', max_hold_days: 3 },
};

export const PLACED_ORDER = {
  venue: 'polymarket' as const,
  order_id: ORDER_ID,
  status: 'live',
  cost_usd: '21',
  fee_usd: '0.0521',
  policy_version: 3,
};

export const ORDERS_QUERY = { credential_id: ID, market: CONDITION };

export const RESTING_ORDERS = {
  orders: [
    {
      order_id: ORDER_ID,
      status: 'LIVE',
      market: CONDITION,
      token_id: PLACE_ORDER_BODY.token_id,
      side: 'buy' as const,
      price_usd: '0.42',
      original_size_shares: '50',
      matched_size_shares: '0',
      outcome: 'Yes',
      created_at: '2026-11-26T09:00:00.000Z',
    },
  ],
};

export const CANCEL_PARAMS = { venue: 'polymarket', order_id: ORDER_ID };
export const CANCEL_QUERY = { credential_id: ID };
export const CANCELLED_ORDER = { venue: 'polymarket' as const, order_id: ORDER_ID, status: 'cancelled' };
export const CANCELLED_ALL = {
  venue: 'polymarket' as const,
  cancelled: 1,
  order_ids: [ORDER_ID],
  complete: true,
};

export const PREPARED_ORDER = {
  venue: 'polymarket' as const,
  prepare_id: 'pmo_4k2x9q7m1v8c3n6b5z0a',
  client_order_id: 'agent-7-2026-11-26-0001',
  typed_data: {
    domain: {
      name: 'Polymarket CTF Exchange',
      version: '2',
      chainId: 137,
      verifyingContract: '0xE111180000d2663C0091e4f400237545B87B996B',
    },
    primaryType: 'Order',
    types: {
      Order: [
        { name: 'salt', type: 'uint256' },
        { name: '…', type: '…' },
      ],
    },
    message: { salt: '1234567890', maker: SIGNER, signer: SIGNER, tokenId: PLACE_ORDER_BODY.token_id },
  },
  order: {
    salt: '1234567890',
    maker: SIGNER,
    signer: SIGNER,
    tokenId: PLACE_ORDER_BODY.token_id,
    makerAmount: '21000000',
    takerAmount: '50000000',
    side: 'BUY',
    signatureType: 0,
    timestamp: '1795683600000',
    expiration: '0',
    metadata: `0x${'0'.repeat(64)}`,
    builder: `0x${'0'.repeat(64)}`,
  },
  cost_usd: '21',
  fee_usd: '0.0521',
  policy_version: 3,
  expires_at: '2026-11-26T09:05:00.000Z',
};

export const SUBMIT_ORDER_BODY = { prepare_id: PREPARED_ORDER.prepare_id, signature: `0x${'1b'.repeat(65)}` };

export const FILL_SYNC_BODY = { wallet: SAFE, credential_id: ID };
export const FILL_SYNC_RESULT = { journaled: 3, skipped: 12, settlements_journaled: 3, complete: true };
