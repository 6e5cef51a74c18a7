import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { notFound } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { newId } from '../../core/ids.ts';
import { checkResolvedDestination, parseDestination } from './destination.ts';
import { webhookSecretContext, type SealingKeyring } from '../../core/sealing.ts';
import { newWebhookSecret } from './seal.ts';
import { deliveryBody, DELIVERY_TIMEOUT_MS, sendDelivery } from './send.ts';
import { getEndpoint, listDeadLetters, putSecretIfAbsent, upsertEndpointUrl } from './store.ts';

export interface WebhookSettings {
  production: boolean;
  /** Seals and opens the secret (config.sealingKeys). */
  keyring: SealingKeyring;
}

/** Validates a destination before the transaction: form, then (production) every resolved address. */
export async function vetDestination(raw: string, settings: WebhookSettings): Promise<string> {
  const url = parseDestination(raw, { production: settings.production });
  if (settings.production) await checkResolvedDestination(url);
  return url.toString();
}

/** Sets the destination; also creates the secret, so every delivery can be signed. */
export async function setEndpoint(
  tx: DbExecutor,
  clock: Clock,
  settings: WebhookSettings,
  accountId: string,
  url: string,
): Promise<void> {
  const now = clock.now();
  await upsertEndpointUrl(tx, accountId, url, now);
  await ensureSecret(tx, clock, settings, accountId);
}

/** The answer when the account has no destination: register one first. */
function noEndpoint(): Error {
  return notFound('This account has no webhook destination registered.', {
    remediation: 'Register one with PUT /v1/webhooks/endpoint {url}.',
    next: [{ method: 'PUT', path: '/v1/webhooks/endpoint', why: 'register the webhook destination' }],
  });
}

/** The account's registered destination. Throws NOT_FOUND (pointing at the PUT) when there is none. */
export async function readEndpoint(db: DbExecutor, accountId: string): Promise<{ url: string }> {
  const row = await getEndpoint(db, accountId);
  if (!row?.url) throw noEndpoint();
  return { url: row.url };
}

/** The event kind of a test delivery (docs/events.md). */
export const TEST_EVENT_KIND = 'test';

export interface TestDelivery {
  event_id: string;
  kind: typeof TEST_EVENT_KIND;
  url: string;
  delivered: boolean;
  status: number | null;
  error: string | null;
  signed_at: string;
}

/**
 * Sends one `test` event to the account's destination now and reports what happened: signed and
 * sent by `sendDelivery`, like every delivery, as attempt 1, within the request's time budget (at
 * most the delivery timeout). It is not recorded as an event, so it is neither retried,
 * dead-lettered nor listed in GET /v1/events; each call has a new event id. Throws NOT_FOUND
 * (pointing at the PUT) when no destination is registered.
 */
export async function sendTestEvent(
  deps: { db: DbExecutor; clock: Clock },
  settings: WebhookSettings,
  accountId: string,
  deadline: Deadline,
): Promise<TestDelivery> {
  const { url } = await readEndpoint(deps.db, accountId);
  const secret = await ensureSecret(deps.db, deps.clock, settings, accountId);
  const now = deps.clock.now();
  const eventId = newId('evt');
  const body = deliveryBody({
    id: eventId,
    kind: TEST_EVENT_KIND,
    created_at: now,
    payload: {
      message: 'A test event sent by POST /v1/webhooks/test. It changes nothing.',
      account_id: accountId,
    },
  });
  deadline.check('sending the test event');
  deadline.markTransmitted(`the test event ${eventId}`);
  const outcome = await sendDelivery(
    { url, secret: () => secret, eventId, body, attempt: 1, unixSeconds: Math.floor(now.getTime() / 1000) },
    {
      production: settings.production,
      signal: AbortSignal.timeout(Math.max(1, Math.min(DELIVERY_TIMEOUT_MS, deadline.remainingMs() - 250))),
    },
  );
  return {
    event_id: eventId,
    kind: TEST_EVENT_KIND,
    url,
    delivered: outcome.error === null,
    status: outcome.status,
    error: outcome.error,
    signed_at: new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString(),
  };
}

/** The account's HMAC secret, created on first use. Never log it. */
export async function ensureSecret(
  tx: DbExecutor,
  clock: Clock,
  settings: WebhookSettings,
  accountId: string,
): Promise<string> {
  const context = webhookSecretContext(accountId);
  const existing = await getEndpoint(tx, accountId);
  if (existing?.secret_sealed) return settings.keyring.open(context, existing.secret_sealed);
  const sealed = await putSecretIfAbsent(
    tx,
    accountId,
    settings.keyring.seal(context, newWebhookSecret()),
    clock.now(),
  );
  return settings.keyring.open(context, sealed);
}

export interface DeadLetterItem {
  id: number;
  event_id: string;
  kind: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  first_attempt_at: string;
  dead_at: string;
  body: string | null;
}

export async function listFailures(
  db: DbExecutor,
  accountId: string,
  limit: number,
  cursor: number | undefined,
): Promise<{ failures: DeadLetterItem[]; next_cursor: number | null }> {
  const rows = await listDeadLetters(db, accountId, limit + 1, cursor);
  const page = rows.slice(0, limit);
  const failures = page.map((r) => ({
    id: Number(r.id),
    event_id: r.event_id,
    kind: r.kind,
    attempts: r.attempts,
    last_status: r.last_status,
    last_error: r.last_error,
    first_attempt_at: new Date(r.first_attempt_at).toISOString(),
    dead_at: new Date(r.dead_at).toISOString(),
    body: r.body,
  }));
  const last = failures.at(-1);
  return { failures, next_cursor: rows.length > limit && last ? last.id : null };
}
