import { Type, type Static } from 'typebox';
import { getAddress, type Hex } from 'viem';
import type { SubmittedAuthorization } from './service.ts';

const ADDRESS = '^0x[0-9a-fA-F]{40}$';
const UINT = '^(0|[1-9][0-9]{0,77})$';

/**
 * An EIP-3009 `TransferWithAuthorization` as the payer signed it, with the field names of the
 * typed data (and of x402's `authorization`): integers as decimal strings.
 */
export const Eip3009Authorization = Type.Object(
  {
    from: Type.String({ pattern: ADDRESS, description: 'The payer: the signer of the authorization.' }),
    to: Type.String({
      pattern: ADDRESS,
      description: 'The platform treasury (see GET /v1/balance/topups/terms).',
    }),
    value: Type.String({ pattern: UINT, description: 'USDC base units (6 decimals: "5000000" is 5 USD).' }),
    validAfter: Type.String({ pattern: UINT, description: 'Unix seconds.' }),
    validBefore: Type.String({ pattern: UINT, description: 'Unix seconds.' }),
    nonce: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: '32 random bytes, hex.' }),
  },
  { additionalProperties: false },
);

export const SignedAuthorization = Type.Object(
  {
    authorization: Eip3009Authorization,
    signature: Type.String({
      pattern: '^0x([0-9a-fA-F]{2}){65,4096}$',
      description: 'The EIP-712 signature: 65-byte ECDSA, or an ERC-1271 smart-account signature.',
    }),
  },
  { additionalProperties: false, title: 'SignedAuthorization' },
);

/** The spec's pending-settlement body (202). */
export const PendingSettlement = Type.Object(
  {
    settlement_status: Type.Literal('pending'),
    nonce: Type.String(),
    value_usd: Type.String(),
    remediation: Type.String(),
  },
  { additionalProperties: false, title: 'PendingSettlement' },
);

export function toSubmitted(body: Static<typeof SignedAuthorization>): SubmittedAuthorization {
  const a = body.authorization;
  return {
    authorization: {
      from: getAddress(a.from),
      to: getAddress(a.to),
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce.toLowerCase() as Hex,
    },
    signature: body.signature.toLowerCase() as Hex,
  };
}
