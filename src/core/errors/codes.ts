// The closed set of error codes: one status, a default remediation and a description each, and
// the next step a caller can take: a default `next` the renderer adds when the raiser names none,
// or `noDefaultNext` saying why there is none (nothing to call, or only the raiser knows it).
// The served error table (/docs/errors) and the renderer both read this table.

/** One step of an error's `next`: a call that moves the caller forward. */
export interface NextStep {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  why: string;
}

/**
 * A default next step. `onlyIn: 'development'` steps are rendered only where development routes
 * are mounted; `{payments_chain}` in `why` becomes the chain top-ups pay on ("chain 8453 (Base)").
 */
export interface DefaultNextStep extends NextStep {
  onlyIn?: 'development';
}

export type ErrorCodeInfo = {
  status: number;
  title: string;
  description: string;
  remediation: string;
} & ({ next: readonly DefaultNextStep[] } | { noDefaultNext: string });

const WHOAMI: DefaultNextStep = {
  method: 'GET',
  path: '/v1/auth/session',
  why: "shows this credential's scopes and wallet pin",
};
const SIGN_IN: DefaultNextStep = {
  method: 'POST',
  path: '/v1/auth/challenge',
  why: 'request a new sign-in challenge and sign its message with your wallet',
};
const TOPUP_TERMS: DefaultNextStep = {
  method: 'GET',
  path: '/v1/balance/topups/terms',
  why: 'what a top-up authorization must say: the chain, the USDC contract, its EIP-712 domain, the payee and the limits',
};
const TOPUP: DefaultNextStep = {
  method: 'POST',
  path: '/v1/balance/topups',
  why: 'top up the prepaid balance with a signed USDC authorization on {payments_chain}, then retry',
};
const FAUCET: DefaultNextStep = {
  method: 'POST',
  path: '/v1/dev/faucet',
  why: 'development only: fund your wallet with test USDC on {payments_chain}, the chain top-ups pay on',
  onlyIn: 'development',
};
const DRY_RUN: DefaultNextStep = {
  method: 'POST',
  path: '/v1/checks',
  why: 'dry-run the request against the active policy: lists every rule it breaks',
};
const POLICY: DefaultNextStep = {
  method: 'GET',
  path: '/v1/policies',
  why: "read the wallet's active policy; PUT /v1/policies publishes a new version",
};

export const ERROR_CODES = {
  INVALID_REQUEST: {
    status: 400,
    title: 'Invalid request',
    description: 'The body or parameters failed validation; the message lists every bad field.',
    remediation: 'Fix the fields named in the message and send the request again.',
    noDefaultNext: 'The fix is in the request itself: the message names every bad field.',
  },
  UNAUTHORIZED: {
    status: 401,
    title: 'Unauthorized',
    description: 'The credential is missing, malformed, expired or revoked.',
    remediation: 'Sign in again (POST /v1/auth/challenge, then POST /v1/auth/verify) or use a valid API key.',
    noDefaultNext:
      'Depends on the credential, so the raiser names it: the guard points a user at POST /v1/auth/challenge; ' +
      'a retired (offboarded) account and the operator token have no sign-in to offer.',
  },
  AUTH_CHALLENGE_EXPIRED: {
    status: 401,
    title: 'Sign-in challenge expired',
    description: 'The SIWE nonce is unknown, already used or older than 10 minutes.',
    remediation: 'Request a new challenge with POST /v1/auth/challenge and sign its message.',
    next: [SIGN_IN],
  },
  AUTH_SIGNATURE_INVALID: {
    status: 401,
    title: 'Signature invalid',
    description:
      'The signature did not verify, or a SIWE field does not match this environment or the challenge that issued the message.',
    remediation: 'Sign the exact message returned by POST /v1/auth/challenge with the wallet named in it.',
    next: [SIGN_IN],
  },
  PAYMENT_INVALID: {
    status: 400,
    title: 'Payment authorization invalid',
    description:
      'The EIP-3009 authorization or x402 payment header (PAYMENT-SIGNATURE or X-PAYMENT) was refused before ' +
      'anything was broadcast: wrong payee, ' +
      'asset, amount or network, outside its validity window, a bad signature, a used nonce or too little USDC. ' +
      'The message names the check (x402 reason codes).',
    remediation:
      'Sign a new authorization with a fresh nonce that pays the stated amount of the stated asset to the stated payee.',
    next: [TOPUP_TERMS],
  },
  PAYMENT_REQUIRED: {
    status: 402,
    title: 'Payment required',
    description: 'The prepaid balance does not cover the fee of this request.',
    remediation: 'Top up the prepaid balance (POST /v1/balance/topups) and retry.',
    next: [TOPUP, TOPUP_TERMS, FAUCET],
  },
  FORBIDDEN: {
    status: 403,
    title: 'Forbidden',
    description: 'The credential is valid but lacks the scope or wallet pin this request needs.',
    remediation: 'Use a session or an API key with the required scope and wallet pin.',
    next: [WHOAMI],
  },
  COUNTERPARTY_BLOCKED: {
    status: 403,
    title: 'Counterparty blocked',
    description: 'The counterparty is on a screening list and the policy requires screening.',
    remediation: 'Choose another counterparty; this one cannot be paid under the wallet policy.',
    noDefaultNext: 'No call unblocks a screened counterparty; pay someone else.',
  },
  EXECUTION_DISABLED: {
    status: 403,
    title: 'Execution disabled',
    description:
      'Execution is switched off for the environment, account, wallet or venue; reads and checks remain.',
    remediation: 'Wait until the switch is turned back on, or use a venue that is enabled.',
    noDefaultNext:
      'The raiser names it: an account panic points at DELETE /v1/account/panic; operator switches have no call an account can make.',
  },
  NOT_FOUND: {
    status: 404,
    title: 'Not found',
    description: 'The resource or route does not exist, or belongs to another account.',
    remediation: 'Check the path and the id; list the resources of your account to find valid ids.',
    noDefaultNext:
      'Which list holds valid ids depends on the resource, so the raiser names it; an unknown route points at the OpenAPI document.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    title: 'Method not allowed',
    description:
      'The path exists but does not accept this HTTP method; the Allow header lists those it does.',
    remediation: 'Use one of the methods listed in the Allow header.',
    noDefaultNext: 'The renderer lists the methods of the Allow header on the same path as next steps.',
  },
  CONFLICT: {
    status: 409,
    title: 'Conflict',
    description: 'The state of the resource forbids this transition.',
    remediation: 'Read the resource again and act on its current state.',
    noDefaultNext:
      'The resource to read again is known only to the raiser, which names it (a delegation names GET /v1/delegations/{id}).',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    title: 'Payload too large',
    description: 'The request body exceeds the size limit.',
    remediation: 'Send a smaller body; the limit is in the message.',
    noDefaultNext: 'Nothing to call: send a smaller body.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported media type',
    description: 'Request bodies must be JSON, sent as they are (no Content-Encoding such as gzip).',
    remediation: 'Send the body as uncompressed JSON with Content-Type: application/json.',
    noDefaultNext: 'Nothing to call: resend the body as JSON.',
  },
  IDEMPOTENCY_CONFLICT: {
    status: 422,
    title: 'Idempotency conflict',
    description:
      'The Idempotency-Key was already used with a different payload (422), or the first request with this key is still in flight (409).',
    remediation: 'Use a new Idempotency-Key for a new request; to retry, resend the identical payload.',
    noDefaultNext:
      'Nothing to call: send a new Idempotency-Key for a new request (422), or wait and retry the identical request (409).',
  },
  BUDGET_EXCEEDED: {
    status: 422,
    title: 'Budget exceeded',
    description: 'The spend exceeds a policy budget or velocity limit; the message names the rule.',
    remediation: 'Wait for the budget to refill or raise the limit in a new policy version.',
    next: [DRY_RUN, POLICY],
  },
  LIMIT_EXCEEDED: {
    status: 422,
    title: 'Limit exceeded',
    description:
      'A prepaid top-up would push the per-account prepaid cap or the platform-wide float cap; nothing was broadcast.',
    remediation: 'Top up a smaller amount; the message names the cap in dollars.',
    next: [{ ...TOPUP_TERMS, why: "shows the account's prepaid cap and what a top-up must say" }],
  },
  POLICY_VIOLATION: {
    status: 422,
    title: 'Policy violation',
    description: "The request exceeds the wallet's active policy; the message names the rule.",
    remediation: 'Change the request to fit the policy, or publish a new policy version.',
    next: [DRY_RUN, POLICY],
  },
  VENUE_REJECTED: {
    status: 422,
    title: 'Venue rejected',
    description: 'The venue refused the request.',
    remediation: 'Read the venue reason in the message, adjust the request and retry.',
    noDefaultNext: 'Nothing to call: the venue gave its reason in the message; adjust the request.',
  },
  NOT_APPLICABLE: {
    status: 422,
    title: 'Not applicable',
    description:
      'The request is well formed, but the resource it names cannot do this: a credential that cannot rotate ' +
      'or wrap (its venue, signature type or owners), nothing to wrap, or a transaction that would revert.',
    remediation:
      'Read the message: it names what the resource lacks. Use a resource that can, or change it first.',
    noDefaultNext: 'Nothing to call: the message names what the resource lacks.',
  },
  RATE_LIMITED: {
    status: 429,
    title: 'Rate limited',
    description: 'Too many requests.',
    remediation: 'Wait for the number of seconds in the Retry-After header, then retry.',
    noDefaultNext: 'Nothing to call: wait for Retry-After.',
  },
  JURISDICTION_BLOCKED: {
    status: 451,
    title: 'Jurisdiction blocked',
    description:
      'Prediction-market surfaces are refused from this jurisdiction; other features are unaffected.',
    remediation: 'Prediction-market features are not available from your location.',
    noDefaultNext: 'Nothing the caller can do from this jurisdiction.',
  },
  INTERNAL: {
    status: 500,
    title: 'Internal error',
    description: 'An unexpected error; nothing about it is your fault.',
    remediation: 'Retry with the same Idempotency-Key; if it persists, report the request_id.',
    noDefaultNext: 'Nothing the caller can do: retry, or report the request_id.',
  },
  VENUE_UNAVAILABLE: {
    status: 502,
    title: 'Venue unavailable',
    description: 'No execution venue answered; transient.',
    remediation: 'Retry in a few seconds.',
    noDefaultNext: 'Nothing to call: retry in a few seconds.',
  },
  UNAVAILABLE: {
    status: 503,
    title: 'Unavailable',
    description:
      'A required backend (database, chain RPC, signer, payments) is unreachable or not configured.',
    remediation: 'Retry in a few seconds; if it persists, the operator must configure the named capability.',
    noDefaultNext: 'Nothing the caller can do: retry, or the operator configures the named capability.',
  },
  DEADLINE_EXCEEDED: {
    status: 504,
    title: 'Deadline exceeded',
    description:
      'The time budget of the request ran out waiting on a third party; the message says whether anything was transmitted.',
    remediation: 'Retry with the same Idempotency-Key; nothing is repeated that already happened.',
    noDefaultNext: 'Nothing to call: retry with the same Idempotency-Key.',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;
