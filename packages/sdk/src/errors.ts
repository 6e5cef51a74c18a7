// Every error answer of the API, as one typed exception: the error body's code, message,
// remediation and next steps, the HTTP status and the request id to quote in support requests.

/** A call that moves the caller forward, from the error body's `next`. */
export interface NextStep {
  method: string;
  path: string;
  why: string;
}

export class PurserError extends Error {
  override readonly name = 'PurserError';
  /** The HTTP status. */
  readonly status: number;
  /** The error code (see /docs/errors), or `HTTP_<status>` when the answer had no error body. */
  readonly code: string;
  readonly remediation: string;
  readonly next: NextStep[];
  readonly requestId: string | null;
  readonly docsUrl: string | null;
  /** The whole parsed body (a 402 carries the x402 payment requirements beside the error fields). */
  readonly body: unknown;
  /** A 402's `PAYMENT-REQUIRED` header (x402 v2 requirements, base64), for `signX402PaymentV2`. */
  readonly paymentRequired: string | null;

  constructor(
    status: number,
    body: unknown,
    requestId: string | null,
    paymentRequired: string | null = null,
  ) {
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const text = (k: string) => (typeof b[k] === 'string' ? (b[k] as string) : null);
    super(text('message') ?? `The API answered ${status} without an error body.`);
    this.status = status;
    this.code = text('code') ?? `HTTP_${status}`;
    this.remediation = text('remediation') ?? '';
    this.next = Array.isArray(b['next']) ? (b['next'] as NextStep[]) : [];
    this.requestId = text('request_id') ?? requestId;
    this.docsUrl = text('docs_url');
    this.body = body;
    this.paymentRequired = paymentRequired;
  }
}

/** Raised by `verifyWebhook` when a delivery is not authentic or too old. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}
