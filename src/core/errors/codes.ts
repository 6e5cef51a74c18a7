// The closed set of error codes: one status, a default remediation and a description each.
// The served error table (/docs/errors) and the renderer both read this table.

export interface ErrorCodeInfo {
  status: number;
  title: string;
  description: string;
  remediation: string;
}

export const ERROR_CODES = {
  INVALID_REQUEST: {
    status: 400,
    title: 'Invalid request',
    description: 'The body or parameters failed validation; the message lists every bad field.',
    remediation: 'Fix the fields named in the message and send the request again.',
  },
  UNAUTHORIZED: {
    status: 401,
    title: 'Unauthorized',
    description: 'The credential is missing, malformed, expired or revoked.',
    remediation: 'Sign in again (POST /v1/auth/challenge, then POST /v1/auth/verify) or use a valid API key.',
  },
  AUTH_CHALLENGE_EXPIRED: {
    status: 401,
    title: 'Sign-in challenge expired',
    description: 'The SIWE nonce is unknown, already used or older than 10 minutes.',
    remediation: 'Request a new challenge with POST /v1/auth/challenge and sign its message.',
  },
  AUTH_SIGNATURE_INVALID: {
    status: 401,
    title: 'Signature invalid',
    description: 'The signature did not verify, or a SIWE field does not match this environment.',
    remediation: 'Sign the exact message returned by POST /v1/auth/challenge with the wallet named in it.',
  },
  PAYMENT_INVALID: {
    status: 400,
    title: 'Payment authorization invalid',
    description:
      'The EIP-3009 authorization or X-PAYMENT header was refused before anything was broadcast: wrong payee, ' +
      'asset, amount or network, outside its validity window, a bad signature, a used nonce or too little USDC. ' +
      'The message names the check (x402 reason codes).',
    remediation:
      'Sign a new authorization with a fresh nonce that pays the stated amount of the stated asset to the stated payee.',
  },
  PAYMENT_REQUIRED: {
    status: 402,
    title: 'Payment required',
    description: 'The prepaid balance does not cover the fee of this request.',
    remediation: 'Top up the prepaid balance (POST /v1/balance/topups) and retry.',
  },
  FORBIDDEN: {
    status: 403,
    title: 'Forbidden',
    description: 'The credential is valid but lacks the scope or wallet pin this request needs.',
    remediation: 'Use a session or an API key with the required scope and wallet pin.',
  },
  COUNTERPARTY_BLOCKED: {
    status: 403,
    title: 'Counterparty blocked',
    description: 'The counterparty is on a screening list and the policy requires screening.',
    remediation: 'Choose another counterparty; this one cannot be paid under the wallet policy.',
  },
  EXECUTION_DISABLED: {
    status: 403,
    title: 'Execution disabled',
    description:
      'Execution is switched off for the environment, account, wallet or venue; reads and checks remain.',
    remediation: 'Wait until the switch is turned back on, or use a venue that is enabled.',
  },
  NOT_FOUND: {
    status: 404,
    title: 'Not found',
    description: 'The resource or route does not exist, or belongs to another account.',
    remediation: 'Check the path and the id; list the resources of your account to find valid ids.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    title: 'Method not allowed',
    description:
      'The path exists but does not accept this HTTP method; the Allow header lists those it does.',
    remediation: 'Use one of the methods listed in the Allow header.',
  },
  CONFLICT: {
    status: 409,
    title: 'Conflict',
    description: 'The state of the resource forbids this transition.',
    remediation: 'Read the resource again and act on its current state.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    title: 'Payload too large',
    description: 'The request body exceeds the size limit.',
    remediation: 'Send a smaller body; the limit is in the message.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported media type',
    description: 'Request bodies must be JSON.',
    remediation: 'Send the body as JSON with Content-Type: application/json.',
  },
  IDEMPOTENCY_CONFLICT: {
    status: 422,
    title: 'Idempotency conflict',
    description:
      'The Idempotency-Key was already used with a different payload (422), or the first request with this key is still in flight (409).',
    remediation: 'Use a new Idempotency-Key for a new request; to retry, resend the identical payload.',
  },
  BUDGET_EXCEEDED: {
    status: 422,
    title: 'Budget exceeded',
    description: 'The spend exceeds a policy budget or velocity limit; the message names the rule.',
    remediation: 'Wait for the budget to refill or raise the limit in a new policy version.',
  },
  LIMIT_EXCEEDED: {
    status: 422,
    title: 'Limit exceeded',
    description:
      'A prepaid top-up would push the per-account prepaid cap or the platform-wide float cap; nothing was broadcast.',
    remediation: 'Top up a smaller amount; the message names the cap in dollars.',
  },
  POLICY_VIOLATION: {
    status: 422,
    title: 'Policy violation',
    description: "The request exceeds the wallet's active policy; the message names the rule.",
    remediation: 'Change the request to fit the policy, or publish a new policy version.',
  },
  VENUE_REJECTED: {
    status: 422,
    title: 'Venue rejected',
    description: 'The venue refused the request.',
    remediation: 'Read the venue reason in the message, adjust the request and retry.',
  },
  RATE_LIMITED: {
    status: 429,
    title: 'Rate limited',
    description: 'Too many requests.',
    remediation: 'Wait for the number of seconds in the Retry-After header, then retry.',
  },
  JURISDICTION_BLOCKED: {
    status: 451,
    title: 'Jurisdiction blocked',
    description:
      'Prediction-market surfaces are refused from this jurisdiction; other features are unaffected.',
    remediation: 'Prediction-market features are not available from your location.',
  },
  INTERNAL: {
    status: 500,
    title: 'Internal error',
    description: 'An unexpected error; nothing about it is your fault.',
    remediation: 'Retry with the same Idempotency-Key; if it persists, report the request_id.',
  },
  VENUE_UNAVAILABLE: {
    status: 502,
    title: 'Venue unavailable',
    description: 'No execution venue answered; transient.',
    remediation: 'Retry in a few seconds.',
  },
  UNAVAILABLE: {
    status: 503,
    title: 'Unavailable',
    description:
      'A required backend (database, chain RPC, signer, payments) is unreachable or not configured.',
    remediation: 'Retry in a few seconds; if it persists, the operator must configure the named capability.',
  },
  DEADLINE_EXCEEDED: {
    status: 504,
    title: 'Deadline exceeded',
    description:
      'The time budget of the request ran out waiting on a third party; the message says whether anything was transmitted.',
    remediation: 'Retry with the same Idempotency-Key; nothing is repeated that already happened.',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;
