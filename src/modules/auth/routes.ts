import type { Hex } from 'viem';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import {
  ChallengeBody,
  ChallengeResponse,
  SignOutResponse,
  WhoAmIResponse,
  VerifyBody,
  VerifyResponse,
} from './schemas.ts';
import {
  challengeChain,
  checkSignIn,
  checksummedAddress,
  completeSignIn,
  issueChallenge,
  SIGN_IN_REPLAY_REMEDIATION,
  signOut,
} from './service.ts';

/** On the development environment only, marks an account created by this sign-in as a test fixture. */
export const TEST_ACCOUNT_HEADER = 'x-service-test-account';

// The examples of the OpenAPI document: one sign-in, from challenge to session.
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const CHALLENGE = {
  message:
    'purser.example wants you to sign in with your Ethereum account:\n' +
    `${WALLET}\n\n` +
    'Sign in to Purser with this wallet. Signing proves you control the address; it moves no funds and costs no gas.\n\n' +
    'URI: https://purser.example\nVersion: 1\nChain ID: 8453\nNonce: Qm7fK2xLp9RtV4wZc8NbJ3hD\n' +
    'Issued At: 2026-03-14T09:26:53.000Z\nExpiration Time: 2026-03-14T09:36:53.000Z',
  nonce: 'Qm7fK2xLp9RtV4wZc8NbJ3hD',
  domain: 'purser.example',
  uri: 'https://purser.example',
  version: '1',
  chain_id: 8453,
  issued_at: '2026-03-14T09:26:53.000Z',
  expiration_time: '2026-03-14T09:36:53.000Z',
};
const SIGNATURE =
  '0x47aabfa6318ae020a49ca8cf024ae4fa910d5e2697fad24771156badb7d57edb418c6d4aa17c74e04a04356c0fabb2f7d0b9baf48d1bef16696a44e4a3f06f901b';

export const authRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/auth/challenge',
    operationId: 'createAuthChallenge',
    summary: 'Start a wallet sign-in: a SIWE message with a single-use nonce',
    description:
      'Returns an EIP-4361 message for the address. Sign it with personal_sign and send it to ' +
      'POST /v1/auth/verify within 10 minutes. The message may be rebuilt with any SIWE library ' +
      'as long as every field is the same.',
    tags: ['authentication'],
    class: 'public',
    wallet: false,
    schema: { body: ChallengeBody, response: { 200: ChallengeResponse } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when: 'chain_id is not a sign-in chain (8453, 84532, 137), or a mixed-case address has a wrong EIP-55 checksum',
        },
        {
          code: 'UNAVAILABLE',
          when: 'chain_id is omitted and the configured default sign-in chain is not one the service knows',
        },
      ],
      responses: { 200: 'The message to sign, with its single-use nonce (valid 10 minutes).' },
      example: { body: { address: WALLET, chain_id: 8453 }, status: 200, response: CHALLENGE },
    },
    handler: async ({ deps, body, mutate }) => {
      const chainId = challengeChain(deps.config, body.chain_id);
      const address = checksummedAddress(body.address);
      return mutate(async (tx) => {
        const c = await issueChallenge(tx, deps.clock, deps.config, { address, chainId });
        return {
          status: 200,
          body: {
            message: c.message,
            nonce: c.nonce,
            domain: c.domain,
            uri: c.uri,
            version: c.version,
            chain_id: c.chainId,
            issued_at: c.issuedAt.toISOString(),
            expiration_time: c.expirationTime.toISOString(),
          },
        };
      });
    },
  }),

  defineRoute({
    method: 'POST',
    url: '/v1/auth/verify',
    operationId: 'verifyAuthSignature',
    summary: 'Finish a wallet sign-in: returns a 24-hour session token once',
    description:
      'Checks the SIWE message against this environment and its challenge, verifies the signature ' +
      '(EOA, ERC-1271, or ERC-6492 for undeployed accounts) on the chain the message names, ' +
      'consumes the nonce and opens a session. The account is created on first sign-in. ' +
      `In development, header ${TEST_ACCOUNT_HEADER}: 1 marks a newly created account as a test fixture. ` +
      'An Idempotency-Key replay returns token null: tokens are never stored.',
    tags: ['authentication'],
    class: 'public',
    wallet: false,
    schema: { body: VerifyBody, response: { 200: VerifyResponse } },
    docs: {
      errors: [
        {
          code: 'AUTH_SIGNATURE_INVALID',
          when:
            'the message is not an EIP-4361 message, a field does not match this environment or the challenge, ' +
            'it is not valid yet, or the signature does not verify',
        },
        {
          code: 'AUTH_CHALLENGE_EXPIRED',
          when: 'the nonce is unknown, already used or expired',
        },
        { code: 'FORBIDDEN', when: 'the address belongs to an offboarded account' },
        {
          code: 'UNAVAILABLE',
          when: "the message's chain has no RPC endpoint configured or did not answer the signature check",
        },
      ],
      responses: {
        200: 'Signed in: the session token, shown once (null in an Idempotency-Key replay), valid 24 hours.',
      },
      example: {
        body: { message: CHALLENGE.message, signature: SIGNATURE },
        status: 200,
        response: {
          token: 'pss_JXJ4im7c4gDWjf2qWUskp6ekM_jGBt-64BQ_Y12NrVc',
          address: WALLET,
          expires_at: '2026-03-15T09:27:10.412Z',
        },
      },
    },
    handler: async ({ deps, body, deadline, req, clientIp, userAgent, mutate }) => {
      const proof = await checkSignIn(deps, deadline, {
        message: body.message,
        signature: body.signature as Hex,
      });
      const markTestAccount = deps.config.env === 'development' && req.headers[TEST_ACCOUNT_HEADER] === '1';
      return mutate(async (tx) => {
        const r = await completeSignIn(tx, deps.clock, proof, {
          markTestAccount,
          network: { clientIp, userAgent },
        });
        const shown = { address: r.address, expires_at: r.expiresAt.toISOString() };
        return {
          status: 200,
          body: { token: r.token, ...shown },
          headers: { 'cache-control': 'no-store' },
          replayBody: { token: null, ...shown, remediation: SIGN_IN_REPLAY_REMEDIATION },
        };
      });
    },
  }),

  defineRoute({
    method: 'GET',
    url: '/v1/auth/session',
    operationId: 'whoAmI',
    summary: 'The calling credential: its account, kind, scopes and wallet pin',
    description: 'Lets an agent check what its token may do before it acts. Costs no database round trip.',
    tags: ['authentication'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { response: { 200: WhoAmIResponse } },
    docs: {
      errors: [],
      responses: { 200: 'The calling credential: its account, kind, scopes and wallet pin.' },
      example: {
        status: 200,
        response: {
          account_id: 'acc_rnwppnrslr81f7b6tiej',
          address: WALLET.toLowerCase(),
          credential: {
            kind: 'key',
            id: 'key_g0mvy9rdymc7z3y9147q',
            scopes: ['read'],
            wallets: null,
          },
        },
      },
    },
    handler: async ({ principal }) => {
      if (!principal) throw new Error('whoAmI: bearer route without a principal');
      return {
        status: 200,
        body: {
          account_id: principal.accountId,
          address: principal.address,
          credential: {
            kind: principal.kind,
            id: principal.credentialId,
            scopes: principal.scopes,
            wallets: principal.wallets,
          },
        },
      };
    },
  }),

  defineRoute({
    method: 'DELETE',
    url: '/v1/auth/session',
    operationId: 'signOut',
    summary: 'Sign out: revoke the calling session',
    description:
      'Revokes the session whose token authorizes this request; afterwards that token gets 401. ' +
      'API keys cannot call it (403): revoke a key with DELETE /v1/keys/{id}.',
    tags: ['authentication'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { response: { 200: SignOutResponse } },
    docs: {
      errors: [{ code: 'FORBIDDEN', when: 'the credential is an API key: only a session signs out' }],
      responses: { 200: 'The session is revoked; its token gets 401 from now on.' },
      example: { status: 200, response: { revoked: true, id: 'ses_guki3pj5f55uyvhzl4wk' } },
    },
    handler: async ({ deps, principal, clientIp, userAgent, mutate }) => {
      if (!principal) throw new Error('signOut: bearer route without a principal');
      const result = await mutate(async (tx) => {
        const { id } = await signOut(tx, deps.clock, principal, { clientIp, userAgent });
        return { status: 200, body: { revoked: true, id } };
      });
      // Committed: this process's cache forgets the session now (others hear the NOTIFY).
      deps.credentialCache?.invalidate(principal.credentialId);
      return result;
    },
  }),
];
