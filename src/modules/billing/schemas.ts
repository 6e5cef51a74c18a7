import { Type } from 'typebox';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../payments/index.ts';

/** The prepaid balance (spec section 2): USD with exactly six decimals. */
export const BalanceResponse = Type.Object(
  {
    balance_usd: Type.String({ pattern: '^(0|[1-9][0-9]*)\\.[0-9]{6}$', examples: ['12.500000'] }),
    currency: Type.Literal('USD'),
  },
  { additionalProperties: false, title: 'PrepaidBalance' },
);

const USD = Type.String({ pattern: '^(0|[1-9][0-9]*)(\\.[0-9]{1,6})?$' });

export const TopupResponse = Type.Object(
  {
    topup: Type.Object(
      {
        id: Type.String(),
        status: Type.Literal('settled'),
        payer: Type.String(),
        value_usd: USD,
        nonce: Type.String(),
        tx_hash: Type.String(),
        settled_at: Type.String({ format: 'date-time' }),
      },
      { additionalProperties: false },
    ),
    balance_usd: BalanceResponse.properties.balance_usd,
  },
  { additionalProperties: false },
);

export const TopupTermsResponse = Type.Object(
  {
    chain_id: Type.Integer(),
    network: Type.String({ description: 'The x402 v1 network name of the chain.' }),
    asset: Type.String({ description: 'USDC on the chain.' }),
    pay_to: Type.String({ description: 'The platform treasury: the `to` of every authorization.' }),
    eip712_domain: Type.Object(
      {
        name: Type.String(),
        version: Type.String(),
        chainId: Type.Integer(),
        verifyingContract: Type.String(),
      },
      {
        additionalProperties: false,
        description: 'The EIP-712 domain of the USDC contract, as `domain` of signTypedData.',
      },
    ),
    eip712_types: Type.Object(
      {
        TransferWithAuthorization: Type.Array(
          Type.Object({ name: Type.String(), type: Type.String() }, { additionalProperties: false }),
        ),
      },
      {
        additionalProperties: false,
        description:
          'The EIP-712 types, as `types` of signTypedData (viem, ethers): TransferWithAuthorization(address ' +
          'from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce). ' +
          'EIP712Domain is left out (ethers refuses it); a raw eth_signTypedData_v4 call adds it from the ' +
          'domain fields name, version, chainId, verifyingContract.',
        examples: [TRANSFER_WITH_AUTHORIZATION_TYPES],
      },
    ),
    primary_type: Type.Literal('TransferWithAuthorization', {
      description:
        'As `primaryType` of signTypedData. The message is {from, to: pay_to, value, validAfter, validBefore, nonce}.',
    }),
    min_value: Type.String({ description: 'The smallest top-up, in USDC base units.' }),
    min_validity_seconds: Type.Integer({
      description: 'validBefore must be at least this far past chain time when the service receives it.',
    }),
    account_cap_usd: USD,
  },
  { additionalProperties: false, title: 'TopupTerms' },
);

export const FeeScheduleResponse = Type.Object(
  {
    metering_enforced: Type.Boolean(),
    currency: Type.Literal('USD'),
    fees: Type.Object(
      {
        conversion_intent: Type.Object({ per_intent_usd: USD }, { additionalProperties: false }),
        pm_order: Type.Object({ base_usd: USD, bps: Type.Integer() }, { additionalProperties: false }),
        feedback: Type.Object({ per_request_usd: USD }, { additionalProperties: false }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
