// The examples of the billing routes' OpenAPI entries (RouteDocs.example). The authorizations are
// signed for real: EIP-3009 TransferWithAuthorization on USDC of Base (domain "USD Coin" version 2)
// from PAYER to TREASURY, so they verify against the domain of GET /v1/balance/topups/terms.

import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../payments/index.ts';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const TREASURY = '0x7A3f1C9e5b2d84F60a1e3c7B9D5F2A4E6c8b0d1f';
const PAYER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** A top-up of 5 USDC, valid for an hour from 2026-03-14T09:30:00Z. */
export const TOPUP_AUTHORIZATION_EXAMPLE = {
  authorization: {
    from: PAYER,
    to: TREASURY,
    value: '5000000',
    validAfter: '0',
    validBefore: '1773484200',
    nonce: '0xd5696dde2ef756f8779fac09e5a48d068a597d16041e4c1a2439052b06a68c9f',
  },
  signature:
    '0x8d0ffb877cbab41049a063cc1c4024fa15b37856469f5600d21f22937f71fd885eca940e9be904123f3bbc24a820584ce9a245bbe6ebbcbabf8e4f9c948a90fd1b',
};

/** An arrow of 10 USDC, valid for 180 days (validBefore 2026-09-10T09:30:00Z). */
export const ARROW_AUTHORIZATION_EXAMPLE = {
  authorization: {
    from: PAYER,
    to: TREASURY,
    value: '10000000',
    validAfter: '0',
    validBefore: '1789032600',
    nonce: '0x3fae4585fc32da139f562f2251316e2bf635251a79757d1b821d07f153ff1c94',
  },
  signature:
    '0xa0126cf9b55783f98bc596fea62ce079c35e81950d83707f73eefb08b8899ee2106bad89139b53d6a483459fc31e76c1073d82e6b3ffe67c83b634ef1984e64f1b',
};

export const BALANCE_EXAMPLE = { balance_usd: '12.500000', currency: 'USD' };

export const TOPUP_TERMS_EXAMPLE = {
  chain_id: 8453,
  network: 'base',
  asset: USDC,
  pay_to: TREASURY,
  eip712_domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: USDC },
  eip712_types: TRANSFER_WITH_AUTHORIZATION_TYPES,
  primary_type: 'TransferWithAuthorization',
  min_value: '10000',
  min_validity_seconds: 30,
  account_cap_usd: '1000',
};

/** The 201 of TOPUP_AUTHORIZATION_EXAMPLE: settled and credited on a balance of 12.5 USD. */
export const TOPUP_EXAMPLE = {
  topup: {
    id: 'pay_7q2k9m4x1c8v3n6b5z0d',
    status: 'settled',
    payer: PAYER.toLowerCase(),
    value_usd: '5',
    nonce: TOPUP_AUTHORIZATION_EXAMPLE.authorization.nonce,
    tx_hash: '0x5194ead3df889a15f3d33e47bcc128114dbb9dcd1147f2de8a8ffba6a815f248',
    settled_at: '2026-03-14T09:30:04.812Z',
  },
  balance_usd: '17.500000',
};

export const FEE_SCHEDULE_EXAMPLE = {
  metering_enforced: true,
  currency: 'USD',
  fees: {
    conversion_intent: { per_intent_usd: '0.05' },
    pm_order: { base_usd: '0.02', bps: 10 },
    feedback: { per_request_usd: '1' },
  },
};

/** The rule PUT by the example, with ARROW_AUTHORIZATION_EXAMPLE ready in the quiver. */
export const AUTO_TOPUP_RULE_EXAMPLE = { threshold_usd: '5', max_per_month: 4 };

export const AUTO_TOPUP_STATE_EXAMPLE = {
  threshold_usd: '5',
  max_per_month: 4,
  suspended: false,
  consecutive_failures: 0,
  quiver: { ready: 1, settled: 0, failed: 0, expired: 0 },
  ready_value_usd: '10',
  used_this_month: 0,
  arrows: [
    {
      nonce: ARROW_AUTHORIZATION_EXAMPLE.authorization.nonce,
      payer: PAYER.toLowerCase(),
      value_usd: '10',
      valid_before: '2026-09-10T09:30:00.000Z',
      status: 'ready',
      tx_hash: null,
      fail_reason: null,
    },
  ],
};
