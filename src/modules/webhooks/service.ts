import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { checkResolvedDestination, parseDestination } from './destination.ts';
import { newWebhookSecret, openSecret, sealingKeyBytes, sealSecret } from './seal.ts';
import { getEndpoint, listDeadLetters, putSecretIfAbsent, upsertEndpointUrl } from './store.ts';

export interface WebhookSettings {
  production: boolean;
  sealingKey: string | null;
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

/** The account's HMAC secret, created on first use. Never log it. */
export async function ensureSecret(
  tx: DbExecutor,
  clock: Clock,
  settings: WebhookSettings,
  accountId: string,
): Promise<string> {
  const key = sealingKeyBytes(settings.sealingKey);
  const existing = await getEndpoint(tx, accountId);
  if (existing?.secret_sealed) return openSecret(key, accountId, existing.secret_sealed);
  const sealed = await putSecretIfAbsent(
    tx,
    accountId,
    sealSecret(key, accountId, newWebhookSecret()),
    clock.now(),
  );
  return openSecret(key, accountId, sealed);
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
