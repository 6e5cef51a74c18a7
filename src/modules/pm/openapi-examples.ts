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
