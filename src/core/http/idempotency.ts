import type { AccountPart } from '../account-part.ts';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { canonicalJson } from '../canonical-json.ts';
import type { Clock } from '../clock.ts';
import { type Db, type Tx, withTransaction } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';
import type { RouteResult, StatementKey } from './results.ts';

export type { StatementKey } from './results.ts';

export const IDEMPOTENCY_TTL_MS = 7 * 24 * 3600 * 1000;
/** How long a duplicate waits for the first request with its key before answering 409. */
const IN_FLIGHT_WAIT = '3s';
/** The claim's lock wait inside a statement other writes share: a held key fails it at once. */
const NO_WAIT = '1ms';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyScope {
  /** The credential's account id, or `ip:<address>` on public routes. */
  scope: string;
  method: string;
  path: string;
  key: string;
  fingerprint: string;
}

export interface MutationResult extends RouteResult {
  /** The exact bytes sent, so a replay is byte-identical. */
  text: string;
  replayed: boolean;
}

/** Validates the Idempotency-Key header value; returns null when absent. */
export function readIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !KEY_PATTERN.test(value)) {
    throw new AppError(
      'INVALID_REQUEST',
      'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      {
        remediation: 'Send a unique key per logical request, for example a UUID.',
      },
    );
  }
  return value;
}

/**
 * The path an Idempotency-Key is recorded under: the pattern of the route that matched, with its
 * decoded parameters put back in one spelling. The router accepts a path in many spellings
 * (percent-escapes of any character, in either case of hex digit); the record must not, or a retry
 * spelled differently would run the mutation again. A path spelled plainly records as itself.
 */
export function idempotencyPath(pattern: string, params: unknown): string {
  const values = (params ?? {}) as Record<string, unknown>;
  return pattern.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(values[name] ?? '')));
}

export function fingerprintOf(method: string, path: string, query: unknown, body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ method, path, query: query ?? null, body: body ?? null }))
    .digest('hex');
}

/**
 * Responses worth replaying: successes that describe a finished outcome. 202 (pending: re-read
 * it), 402 (a retry carrying X-PAYMENT must be processed) and errors are never stored; an error
 * rolled the transaction back, so a retry simply runs again.
 */
export function isStorable(status: number): boolean {
  return status >= 200 && status < 300 && status !== 202;
}

function serialize(result: RouteResult): string {
  return JSON.stringify(result.body);
}

/**
 * Runs a mutation with an optional Idempotency-Key. The claim, the domain write and the stored
 * response commit in one transaction; a concurrent duplicate blocks on the claim's unique key,
 * then replays what the first committed (409 if the first is still running after a short wait);
 * the same key with another payload is 422 IDEMPOTENCY_CONFLICT.
 */
export async function runIdempotent(
  db: Db,
  clock: Clock,
  scope: IdempotencyScope | null,
  fn: (tx: Tx) => Promise<RouteResult>,
): Promise<MutationResult> {
  if (!scope) {
    const result = await withTransaction(db, fn);
    return { ...result, text: serialize(result), replayed: false };
  }
  const stored = await findStored(db, clock, scope);
  if (stored) return replay(stored, scope);
  return claimAndRun(db, clock, scope, fn);
}

/**
 * For work that writes nothing to the database (a screening, a devnet faucet): `fn` runs outside
 * any transaction (it may use the pool freely), and its result is stored under the key in a
 * short transaction afterwards. Concurrent duplicates may both compute; one result is kept and
 * the other request replays it.
 */
export async function runReplayable(
  db: Db,
  clock: Clock,
  scope: IdempotencyScope | null,
  fn: () => Promise<RouteResult>,
): Promise<MutationResult> {
  if (!scope) {
    const result = await fn();
    return { ...result, text: serialize(result), replayed: false };
  }
  const stored = await findStored(db, clock, scope);
  if (stored) return replay(stored, scope);
  const result = await fn();
  return claimAndRun(db, clock, scope, async () => result);
}

async function claimAndRun(
  db: Db,
  clock: Clock,
  scope: IdempotencyScope,
  fn: (tx: Tx) => Promise<RouteResult>,
): Promise<MutationResult> {
  let claiming = false;
  const keySql = statementKey(scope, clock);
  try {
    return await withTransaction(db, async (tx) => {
      // One call claims the key: it waits at most IN_FLIGHT_WAIT for a first request still in
      // flight, then puts the transaction's lock_timeout back for the domain write (migration 0019).
      claiming = true;
      await sql`SELECT ${keySql.claim(true)}`.execute(tx);
      claiming = false;
      const result = await fn(tx);
      await sql`SELECT ${keySql.answer(result)}`.execute(tx);
      return { ...result, text: serialize(result), replayed: false };
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (claiming && code === KEY_HELD) return replayOrInFlight(db, clock, scope);
    if (claiming && code === LOCK_NOT_AVAILABLE) throw inFlight();
    throw err;
  }
}

/** SQLSTATE of a lock wait cut short by lock_timeout: the key's first request is still in flight. */
const LOCK_NOT_AVAILABLE = '55P03';
/** SQLSTATE raised by purser_claim_idempotency_key_or_refuse (migration 0021): the key is held. */
const KEY_HELD = 'PK409';

function statementKey(scope: IdempotencyScope, clock: Clock): StatementKey {
  const { scope: owner, method, path, key, fingerprint } = scope;
  const now = clock.now();
  const expires = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
  const args = (wait: string) =>
    sql`${owner}, ${method}, ${path}, ${key}, ${fingerprint}, ${now}, ${expires}, ${wait}`;
  const release = sql`purser_release_idempotency_key(${owner}, ${method}, ${path}, ${key})`;
  return {
    claim: (wait) => sql`purser_claim_idempotency_key_or_refuse(${args(wait ? IN_FLIGHT_WAIT : NO_WAIT)})`,
    answer(result) {
      if (!isStorable(result.status)) return release;
      const text = result.replayBody === undefined ? serialize(result) : JSON.stringify(result.replayBody);
      return sql`purser_store_idempotency_response(${owner}, ${method}, ${path}, ${key}, ${result.status}::int,
        ${text})`;
    },
    release,
  };
}

/**
 * For a write that is one statement committing alone (a booking through the ledger's batcher):
 * the Idempotency-Key goes into that statement instead of a transaction around it. `write` gets
 * the key's SQL (null without a key), puts `claim` before its write, `answer(result)` after it
 * and `release` where the write is refused, and returns its result; or null when it wrote nothing
 * and the request has to take the transactional path, `fallback` under `runIdempotent`. A stored
 * answer is found by the write's claim (so a first request reads nothing before it writes) and
 * replayed; so is one found after a refusal `write` raised before claiming; a key another
 * request holds replays its answer once that request committed (409 while it is still in flight
 * after IN_FLIGHT_WAIT).
 */
export async function runIdempotentAlone(
  db: Db,
  clock: Clock,
  scope: IdempotencyScope | null,
  write: (key: StatementKey | null) => Promise<RouteResult | null>,
  fallback: (tx: Tx) => Promise<RouteResult>,
): Promise<MutationResult> {
  // No read first: the write's claim finds a stored answer itself (it raises KEY_HELD), so a
  // first request costs the write's round trip alone.
  let result: RouteResult | null;
  try {
    result = await write(scope ? statementKey(scope, clock) : null);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (scope && code === KEY_HELD) return replayOrInFlight(db, clock, scope);
    if (scope && code === LOCK_NOT_AVAILABLE) throw inFlight();
    // A refusal before the claim (a check that reads state which has changed since) must not
    // hide the answer a first request stored: replay it when there is one.
    const stored = scope && err instanceof AppError ? await findStored(db, clock, scope) : undefined;
    if (stored) return replay(stored, scope!);
    throw err;
  }
  if (result === null) return runIdempotent(db, clock, scope, fallback);
  return { ...result, text: serialize(result), replayed: false };
}

async function replayOrInFlight(db: Db, clock: Clock, scope: IdempotencyScope): Promise<MutationResult> {
  const row = await findStored(db, clock, scope);
  if (row) return replay(row, scope);
  throw inFlight();
}

/** 409: the first request with this Idempotency-Key has not finished yet. */
export function inFlight(): AppError {
  return new AppError('IDEMPOTENCY_CONFLICT', 'A request with this Idempotency-Key is still in flight.', {
    status: 409,
    remediation: 'Wait a moment and retry with the same key; the first result will be replayed.',
  });
}

interface StoredResponse {
  fingerprint: string;
  response_status: number;
  response_body: string;
}

async function findStored(
  db: Db,
  clock: Clock,
  scope: IdempotencyScope,
): Promise<StoredResponse | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'response_status', 'response_body'])
    .where('scope', '=', scope.scope)
    .where('method', '=', scope.method)
    .where('path', '=', scope.path)
    .where('key', '=', scope.key)
    .where('expires_at', '>', clock.now())
    .where('response_status', '>', 0)
    .executeTakeFirst();
}

/** 422: the Idempotency-Key was used before with another request payload. */
export function keyReusedError(): AppError {
  return new AppError(
    'IDEMPOTENCY_CONFLICT',
    'This Idempotency-Key was already used with a different request payload.',
  );
}

function replay(row: StoredResponse, scope: IdempotencyScope): MutationResult {
  if (row.fingerprint !== scope.fingerprint) throw keyReusedError();
  return {
    status: row.response_status,
    body: JSON.parse(row.response_body) as unknown,
    text: row.response_body,
    headers: { 'idempotent-replayed': 'true' },
    replayed: true,
  };
}

/** Deletes stored responses past their 7 days; the housekeeping schedule runs it. Returns rows deleted. */
export async function purgeExpiredIdempotencyKeys(db: Db, clock: Clock): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', clock.now())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Stored responses belong to the account their scope names (src/core/account-part.ts). */
export const idempotencyAccountPart: AccountPart = {
  module: 'core',
  tables: [
    {
      table: 'idempotency_keys',
      column: 'scope',
      exported: { omitted: 'responses stored 7 days for replay; what they changed is exported' },
      offboard: 'kept',
    },
  ],
};
