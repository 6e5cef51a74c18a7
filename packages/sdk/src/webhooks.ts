// Verifying a webhook delivery: the `x-service-signature` header is `t=<unix>,v1=<hex>`, the
// HMAC-SHA256 keyed with the account's webhook secret over `<t>.<event_id>.<raw body>`; the
// event id is in `x-service-event-id`. A delivery older than the tolerance is refused (replay).

import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.ts';

export const SIGNATURE_HEADER = 'x-service-signature';
export const EVENT_ID_HEADER = 'x-service-event-id';

export interface WebhookDelivery {
  /** The account's secret (GET /v1/webhooks/secret). */
  secret: string;
  /** The request's headers (a plain object, as node:http gives them, or a Headers). */
  headers: Record<string, string | string[] | undefined> | Headers;
  /** The raw body exactly as received, before any JSON parsing. */
  body: string | Uint8Array;
  /** Seconds a delivery stays acceptable (default 300). */
  toleranceSeconds?: number;
  /** Unix seconds now (for tests). */
  now?: number;
}

function header(headers: WebhookDelivery['headers'], name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a delivery's signature and age; returns its parsed event. Throws
 * WebhookVerificationError when the signature is missing, wrong or too old.
 */
export function verifyWebhook<T = Record<string, unknown>>(delivery: WebhookDelivery): T {
  const signature = header(delivery.headers, SIGNATURE_HEADER);
  const eventId = header(delivery.headers, EVENT_ID_HEADER);
  if (!signature || !eventId)
    throw new WebhookVerificationError(`The delivery lacks ${SIGNATURE_HEADER} or ${EVENT_ID_HEADER}.`);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature);
  if (!match?.[1] || !match[2]) throw new WebhookVerificationError(`Malformed ${SIGNATURE_HEADER}.`);
  const t = Number(match[1]);
  const now = delivery.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (delivery.toleranceSeconds ?? 300))
    throw new WebhookVerificationError('The delivery is older than the tolerance; refuse it as a replay.');
  const raw = typeof delivery.body === 'string' ? delivery.body : Buffer.from(delivery.body).toString('utf8');
  const expected = createHmac('sha256', delivery.secret).update(`${t}.${eventId}.${raw}`).digest();
  if (!timingSafeEqual(expected, Buffer.from(match[2], 'hex')))
    throw new WebhookVerificationError('The signature does not match: not from Purser, or altered.');
  return JSON.parse(raw) as T;
}
