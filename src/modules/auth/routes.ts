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
