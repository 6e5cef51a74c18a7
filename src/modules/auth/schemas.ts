import { Type } from 'typebox';

const Address = Type.String({
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: '0x followed by 40 hex characters; mixed case must be a correct EIP-55 checksum',
});
const DateTime = Type.String({ format: 'date-time' });

/** Longest sign-in message accepted (ours are about 450 characters). */
export const SIWE_MESSAGE_MAX_LENGTH = 4096;
/** Longest signature accepted, in hex characters: room for ERC-6492 wrappers with factory calldata. */
export const SIGNATURE_MAX_HEX = 16_384;

export const ChallengeBody = Type.Object(
  {
    address: Address,
    chain_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'EIP-155 chain id the wallet signs for: 8453, 84532 or 137 (default: the service’s)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ChallengeResponse = Type.Object(
  {
    message: Type.String({ description: 'The EIP-4361 message to sign with personal_sign (EIP-191)' }),
    nonce: Type.String(),
    domain: Type.String(),
    uri: Type.String(),
    version: Type.Literal('1'),
    chain_id: Type.Integer(),
    issued_at: DateTime,
    expiration_time: DateTime,
  },
  { additionalProperties: false },
);

export const VerifyBody = Type.Object(
  {
    message: Type.String({
      minLength: 1,
      maxLength: SIWE_MESSAGE_MAX_LENGTH,
      description:
        'The challenge message as signed. It may be rebuilt with any SIWE library, but every field must be the challenge’s',
    }),
    signature: Type.String({
      pattern: '^0x([0-9a-fA-F]{2})+$',
      maxLength: SIGNATURE_MAX_HEX + 2,
      description: '65-byte ECDSA, an ERC-1271 contract-account signature or an ERC-6492-wrapped one',
    }),
  },
  { additionalProperties: false },
);

export const VerifyResponse = Type.Object(
  {
    token: Type.Union([Type.String(), Type.Null()], {
      description: 'The session token (pss_…), shown once; null in an Idempotency-Key replay',
    }),
    address: Address,
    expires_at: DateTime,
    remediation: Type.Optional(
      Type.String({ description: 'Only in a replay: why the token is null and what to do' }),
    ),
  },
  { additionalProperties: false },
);

export const SignOutResponse = Type.Object(
  { revoked: Type.Literal(true), id: Type.String({ description: 'The revoked session (ses_…)' }) },
  { additionalProperties: false },
);

export const WhoAmIResponse = Type.Object({
  account_id: Type.String(),
  address: Type.String({ description: 'The account wallet address (lowercase)' }),
  credential: Type.Object({
    kind: Type.Union([Type.Literal('session'), Type.Literal('key')]),
    id: Type.String(),
    scopes: Type.Array(Type.String()),
    wallets: Type.Union([Type.Array(Type.String()), Type.Null()]),
  }),
});
