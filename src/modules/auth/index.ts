export { authRoutes, TEST_ACCOUNT_HEADER } from './routes.ts';
export {
  challengeChain,
  checkSignIn,
  checksummedAddress,
  completeSignIn,
  issueChallenge,
  SESSION_TTL_MS,
  SIGN_IN_REPLAY_REMEDIATION,
  signOut,
  type Challenge,
  type SignInProof,
  type SignInResult,
} from './service.ts';
export {
  buildSiweMessage,
  parseSiweMessage,
  SIWE_CHAIN_IDS,
  SIWE_CLOCK_SKEW_MS,
  SIWE_NONCE_TTL_MS,
  type SiweFields,
} from './siwe.ts';
export { createAuthenticator } from './authenticator.ts';
export type { CredentialCache, VerifiedCredential } from './credential-cache.ts';
export { hashToken, newToken, tokenKind, API_KEY_PREFIX, SESSION_TOKEN_PREFIX } from './tokens.ts';
export { deleteCredentialUsesSeenBefore, deleteSiweNoncesExpiredBefore } from './store.ts';
export { authAccountPart, revokeAccountKeys, revokeAccountSessions } from './account-part.ts';
