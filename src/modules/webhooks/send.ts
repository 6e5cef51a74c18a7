// One signed delivery attempt: the body, the signature and the headers of a webhook, and the POST
// that carries them. The delivery workers (dispatcher.ts) and the test event (POST
// /v1/webhooks/test) both send through `sendDelivery`, so a test event is signed and sent exactly
// like a real one.

import { createHmac } from 'node:crypto';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, refusedAddressReason } from './destination.ts';

export const SIGNATURE_HEADER = 'x-service-signature';
export const EVENT_ID_HEADER = 'x-service-event-id';
export const ATTEMPT_HEADER = 'x-service-delivery-attempt';
/** How long one attempt may take before it counts as failed. */
export const DELIVERY_TIMEOUT_MS = 10_000;

const MAX_ERROR = 500;

/** The body of a delivery: stable across attempts, so its hash identifies the envelope. */
export function deliveryBody(event: {
  id: string;
  kind: string;
  created_at: Date;
  payload: unknown;
}): string {
  return JSON.stringify({
    id: event.id,
    kind: event.kind,
    created_at: event.created_at.toISOString(),
    data: typeof event.payload === 'string' ? (JSON.parse(event.payload) as unknown) : event.payload,
  });
}

/** `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<event_id>.<raw_body>">`, keyed by the secret's UTF-8 bytes. */
export function signatureHeader(secret: string, unixSeconds: number, eventId: string, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${eventId}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export interface DeliveryAttempt {
  /** The account's destination; null when none is registered (the attempt fails, nothing is sent). */
  url: string | null;
  /** The signing secret; called only once the destination passed its checks. */
  secret(): string;
  eventId: string;
  /** The raw body (`deliveryBody`). */
  body: string;
  /** The attempt number sent in `x-service-delivery-attempt` (1 for the first). */
  attempt: number;
  /** The signature's `t`, in Unix seconds. */
  unixSeconds: number;
}

export interface DeliveryOutcome {
  /** The receiver's HTTP status; null when no answer came. */
  status: number | null;
  /** Null on a 2xx answer, else why the attempt failed (at most 500 characters). */
  error: string | null;
  /** What was signed and sent; null when the attempt failed before signing (nothing was sent). */
  envelope: { body: string; signature: string } | null;
}

export interface SendOptions {
  /** Production: https only, and every address the host resolves to must be publicly routable. */
  production: boolean;
  /** Ends the attempt (a timeout, a stopping worker); the attempt then fails with its reason. */
  signal: AbortSignal;
}

function post(
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<number> {
  const request: RequestOptions = {
    method: 'POST',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    // One deadline for the whole attempt, a resend on a fresh connection included.
    signal: options.signal,
  };
  if (options.production) request.lookup = guardedLookup;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const once = (resendIfStale: boolean) =>
    new Promise<number>((resolve, reject) => {
      let answered = false;
      const req = send(url, request, (res) => {
        answered = true;
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive connection the receiver closed while it sat idle in the pool fails with
        // ECONNRESET ("socket hang up") before any answer: send again, once, on a new connection.
        // It is the same attempt (same number and signature); only a receiver that got the
        // request and then dropped the connection sees it twice, as at-least-once allows.
        if (resendIfStale && req.reusedSocket && !answered && err.code === 'ECONNRESET') {
          resolve(once(false));
          return;
        }
        reject(err);
      });
      req.end(body);
    });
  return once(true);
}

/**
 * Checks the destination (in production: https, no private address literal, and through the
 * connection's own lookup no private resolved address), signs the body and POSTs it. Never
 * throws: a failure is the outcome's `error`. Any 2xx answer is success.
 */
export async function sendDelivery(d: DeliveryAttempt, options: SendOptions): Promise<DeliveryOutcome> {
  let envelope: DeliveryOutcome['envelope'] = null;
  try {
    if (!d.url) throw new Error('the account has no webhook destination');
    const url = new URL(d.url);
    if (options.production) {
      if (url.protocol !== 'https:') throw new Error('destination refused: not https');
      // An IP literal never goes through `lookup`: check it here.
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const reason = isIP(host) === 0 ? null : refusedAddressReason(host);
      if (reason) throw new Error(`destination refused: ${reason}`);
    }
    const signature = signatureHeader(d.secret(), d.unixSeconds, d.eventId, d.body);
    envelope = { body: d.body, signature };
    const status = await post(
      url,
      d.body,
      {
        'content-type': 'application/json',
        'user-agent': 'Purser-Webhooks/1',
        [EVENT_ID_HEADER]: d.eventId,
        [ATTEMPT_HEADER]: String(d.attempt),
        [SIGNATURE_HEADER]: signature,
      },
      options,
    );
    return status >= 200 && status < 300
      ? { status, error: null, envelope }
      : { status, error: `HTTP ${status}`, envelope };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { status: null, error: message.slice(0, MAX_ERROR), envelope };
  }
}
