import type { Actor } from '../../core/http/actor.ts';
// API keys: create, enroll, rotate, revoke and list. Every change writes its event, its audit
// fact and (for revocation and rotation) the credential-changed notification in the caller's
// transaction. Tokens exist only in the response of the request that made them.

import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { AppError, invalidRequest, notFound } from '../../core/errors/app-error.ts';
import type { Principal, Scope } from '../../core/http/route-table.ts';
import { newId } from '../../core/ids.ts';
import { recordAudit } from '../audit/index.ts';
import { effectiveScopes } from '../auth/scopes.ts';
import { API_KEY_PREFIX, hashToken, newToken } from '../auth/tokens.ts';
import { emitEvent } from '../events/index.ts';
import { ipRulesWithin, normalizeIpRule } from './ip-rules.ts';
import { DEFAULT_EXPIRES_IN_DAYS, MAX_EXPIRES_IN_DAYS } from './schemas.ts';
import {
  findKeyById,
  insertKey,
  listKeysOfAccount,
  lockActiveKey,
  lockRotatableKeys,
  notifyCredentialChanged,
  retireRotatedKey,
  revokeKeyRow,
  type ApiKeyRow,
} from '../auth/key-store.ts';

export const DAY_MS = 86_400_000;
export const DEFAULT_SCOPES: Scope[] = ['read'];
export const REPLAY_REMEDIATION =
  'This is an Idempotency-Key replay: tokens are shown once and never stored, so token is null. ' +
  'If the token was lost, rotate the key (POST /v1/keys/rotate) or revoke it (DELETE /v1/keys/{id}).';

/** What a key may do: its scopes, its wallet pin and its IP pin (null = no pin). */
export interface KeyGrant {
  scopes: Scope[];
  wallets: string[] | null;
  allowedIps: string[] | null;
}

/** A key to be made: its grant, a label and how long it lives. */
export interface KeySpec extends KeyGrant {
  name: string | null;
  lifetimeMs: number;
}

/** What the caller holds; a session holds everything. */
export type CallerGrant = { kind: 'session' } | ({ kind: 'key'; id: string } & KeyGrant);

/** Who makes the change, for created_by, the audit fact and its network context. */
export type KeyActor = Actor;

export interface IssuedKey {
  row: ApiKeyRow;
  /** The raw token: in the response of this request only. */
  token: string;
}

export interface Rotation {
  oldId: string;
  oldExpiresAt: Date;
  issued: IssuedKey;
}

const forbidden = (message: string) =>
  new AppError('FORBIDDEN', message, {
    remediation:
      'A key can only make, rotate or revoke keys within its own scopes, wallet pin and IP pin; use a session or a wider admin key.',
  });

// ---------------------------------------------------------------------------------------------
// Requests

export interface CreateKeyInput {
  name?: string;
  scopes?: Scope[];
  expires_in_days?: number;
  allowed_ips?: string[];
  wallets?: string[];
}

export interface EnrollAgentInput {
  wallet: string;
  name?: string;
  scopes?: Scope[];
  expires_in_days?: number;
}

/** Checks what the schema cannot (IP rules, wallet duplicates, impossible combinations): 400. */
export function parseCreateRequest(body: CreateKeyInput): KeySpec {
  const spec: KeySpec = {
    name: body.name ?? null,
    scopes: body.scopes ?? [...DEFAULT_SCOPES],
    wallets: body.wallets ? normalizeWallets(body.wallets, 'wallets') : null,
    allowedIps: body.allowed_ips ? normalizeAllowedIps(body.allowed_ips, 'allowed_ips') : null,
    lifetimeMs: lifetimeOf(body.expires_in_days),
  };
  checkCombination(spec, '');
  return spec;
}

/** One spec per agent, each pinned to exactly its wallet; duplicate wallets are a 400. */
export function parseEnrollRequest(body: { agents: EnrollAgentInput[] }): KeySpec[] {
  const seen = new Map<string, number>();
  const problems: string[] = [];
  const specs = body.agents.map((agent, i) => {
    const wallet = agent.wallet.toLowerCase();
    const first = seen.get(wallet);
    if (first === undefined) seen.set(wallet, i);
    else problems.push(`agents[${i}].wallet repeats agents[${first}].wallet (${wallet})`);
    const spec: KeySpec = {
      name: agent.name ?? null,
      scopes: agent.scopes ?? [...DEFAULT_SCOPES],
      wallets: [wallet],
      allowedIps: null,
      lifetimeMs: lifetimeOf(agent.expires_in_days),
    };
    const combination = combinationProblem(spec, `agents[${i}].`);
    if (combination) problems.push(combination);
    return spec;
  });
  if (problems.length > 0) throw invalidRequest(`Invalid body: ${problems.join('; ')}.`);
  return specs;
}

function lifetimeOf(days: number | undefined): number {
  return (days ?? DEFAULT_EXPIRES_IN_DAYS) * DAY_MS;
}

function normalizeWallets(wallets: string[], field: string): string[] {
  const out = wallets.map((w) => w.toLowerCase());
  const problems: string[] = [];
  out.forEach((w, i) => {
    const first = out.indexOf(w);
    if (first !== i) problems.push(`${field}[${i}] repeats ${field}[${first}] (${w})`);
  });
  if (problems.length > 0) throw invalidRequest(`Invalid body: ${problems.join('; ')}.`);
  return out;
}

function normalizeAllowedIps(entries: string[], field: string): string[] {
  const problems: string[] = [];
  const out: string[] = [];
  entries.forEach((entry, i) => {
    const rule = normalizeIpRule(entry);
    if (rule === null) {
      problems.push(
        `${field}[${i}] (${JSON.stringify(entry)}) is not an IPv4 or IPv6 address or a CIDR block such as 203.0.113.0/24`,
      );
      return;
    }
    const first = out.indexOf(rule);
    if (first !== -1) problems.push(`${field}[${i}] repeats ${field}[${first}] (${rule})`);
    out.push(rule);
  });
  if (problems.length > 0) throw invalidRequest(`Invalid body: ${problems.join('; ')}.`);
  return out;
}

/**
 * Grants no key can usefully hold. A wallet pin with admin: every admin surface (key management,
 * webhooks, export, offboarding, unpanic) is account-wide, and the guard refuses a pinned key on
 * every account-wide route, so the scope could never be used.
 */
function combinationProblem(grant: KeyGrant, prefix: string): string | null {
  if (grant.wallets && grant.scopes.includes('admin')) {
    return `${prefix}scopes: a wallet-pinned key cannot hold admin, which is account-wide (drop ${prefix}wallets or the admin scope)`;
  }
  return null;
}

function checkCombination(grant: KeyGrant, prefix: string): void {
  const problem = combinationProblem(grant, prefix);
  if (problem) throw invalidRequest(`Impossible combination: ${problem}.`);
}

// ---------------------------------------------------------------------------------------------
// The caller's own grant

/** The caller's grant read fresh in the transaction (a revoked caller key is refused). */
export async function loadCaller(tx: DbExecutor, principal: Principal, now: Date): Promise<CallerGrant> {
  if (principal.kind === 'session') return { kind: 'session' };
  const row = await findKeyById(tx, principal.credentialId);
  if (!row || row.revoked_at || row.expires_at.getTime() <= now.getTime()) {
    throw new AppError('UNAUTHORIZED', 'The calling API key was revoked or expired during the request.');
  }
  return {
    kind: 'key',
    id: row.id,
    scopes: row.scopes as Scope[],
    wallets: row.wallets,
    allowedIps: row.allowed_ips,
  };
}

/** A key made by an IP-pinned key keeps its maker's IP pin unless it names a narrower one. */
export function inheritIpPin<T extends KeyGrant>(caller: CallerGrant, spec: T): T {
  if (caller.kind === 'key' && caller.allowedIps && spec.allowedIps === null) {
    return { ...spec, allowedIps: [...caller.allowedIps] };
  }
  return spec;
}

/**
 * A key makes (or rotates) only keys within itself: scopes within its effective scopes, wallets
 * within its pin (a pinned key cannot make an unpinned one), IP ranges within its IP pin. A
 * session is unrestricted. 403 naming what exceeds.
 */
export function assertWithinCaller(caller: CallerGrant, grant: KeyGrant, what: string): void {
  if (caller.kind === 'session') return;
  const held = effectiveScopes(caller.scopes);
  const extra = grant.scopes.filter((s) => !held.has(s));
  if (extra.length > 0) {
    throw forbidden(`${what} would hold scope ${extra.join(', ')}, which the calling key lacks.`);
  }
  const pinned = caller.wallets;
  if (pinned) {
    if (!grant.wallets) {
      throw forbidden(
        `${what} would be account-wide, but the calling key is pinned to wallets: it can only make keys pinned to its own wallets.`,
      );
    }
    const outside = grant.wallets.filter((w) => !pinned.includes(w));
    if (outside.length > 0) {
      throw forbidden(
        `${what} would reach wallet ${outside.join(', ')}, outside the calling key's wallet pin.`,
      );
    }
  }
  if (caller.allowedIps) {
    if (!grant.allowedIps) {
      throw forbidden(
        `${what} would be usable from any address, but the calling key is pinned to IP addresses.`,
      );
    }
    if (!ipRulesWithin(grant.allowedIps, caller.allowedIps)) {
      throw forbidden(`${what} would admit addresses outside the calling key's allowed_ips.`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Changes (all in the caller's transaction)

function actorName(principal: Principal): string {
  return `${principal.kind}:${principal.credentialId}`;
}

async function issueKey(
  tx: DbExecutor,
  now: Date,
  actor: KeyActor,
  spec: KeySpec,
  rotatedFrom: string | null,
): Promise<IssuedKey> {
  const token = newToken(API_KEY_PREFIX);
  const row: ApiKeyRow = {
    id: newId('key'),
    account_id: actor.principal.accountId,
    name: spec.name,
    token_hash: hashToken(token),
    scopes: [...spec.scopes],
    wallets: spec.wallets ? [...spec.wallets] : null,
    allowed_ips: spec.allowedIps ? [...spec.allowedIps] : null,
    created_at: now,
    expires_at: new Date(now.getTime() + spec.lifetimeMs),
    revoked_at: null,
    rotated_to: null,
    rotated_from: rotatedFrom,
    created_by: actorName(actor.principal),
  };
  await insertKey(tx, row);
  return { row, token };
}

function grantFacts(row: ApiKeyRow) {
  return {
    name: row.name,
    scopes: row.scopes,
    wallets: row.wallets,
    allowed_ips: row.allowed_ips,
    expires_at: row.expires_at.toISOString(),
  };
}

/** Creates keys (POST /v1/keys: one; enroll: one per agent), all or none. */
export async function createKeys(
  tx: DbExecutor,
  clock: Clock,
  actor: KeyActor,
  specs: KeySpec[],
  via: 'create' | 'enroll',
): Promise<IssuedKey[]> {
  const now = clock.now();
  const caller = await loadCaller(tx, actor.principal, now);
  const checked = specs.map((spec, i) => {
    const inherited = inheritIpPin(caller, spec);
    assertWithinCaller(caller, inherited, via === 'enroll' ? `The key for agents[${i}]` : 'The new key');
    return inherited;
  });
  const issued: IssuedKey[] = [];
  for (const spec of checked) {
    const key = await issueKey(tx, now, actor, spec, null);
    const facts = { key_id: key.row.id, via, created_by: key.row.created_by, ...grantFacts(key.row) };
    await emitEvent(tx, clock, {
      accountId: actor.principal.accountId,
      kind: 'key.created',
      subject: key.row.id,
      payload: facts,
    });
    await recordAudit(tx, clock, {
      accountId: actor.principal.accountId,
      actor: key.row.created_by,
      action: 'key.created',
      subject: key.row.id,
      details: facts,
      network: actor.network,
    });
    issued.push(key);
  }
  return issued;
}

/**
 * Replaces each named key by a new one with the same name, scopes, wallet pin and IP pin, and a
 * lifetime equal to the old key's (capped at 365 days) from now. The old key is revoked now
 * (overlap 0) or expires at min(now + overlap, its own expiry). All or nothing: 404 naming every
 * id that is not an active, not yet rotated key of the account.
 */
export async function rotateKeys(
  tx: DbExecutor,
  clock: Clock,
  actor: KeyActor,
  ids: string[],
  overlapSeconds: number,
): Promise<Rotation[]> {
  const now = clock.now();
  const caller = await loadCaller(tx, actor.principal, now);
  const rows = await lockRotatableKeys(tx, actor.principal.accountId, ids, now);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) {
    throw notFound(
      `No active API key ${missing.join(', ')} on this account (unknown, revoked, expired or already rotated); nothing was rotated.`,
      {
        remediation:
          'List the keys (GET /v1/keys) and rotate only those with status active and no rotated_to.',
        next: [{ method: 'GET', path: '/v1/keys', why: 'see which keys are active' }],
      },
    );
  }
  const ordered = ids.map((id) => byId.get(id) as ApiKeyRow);
  for (const row of ordered) {
    assertWithinCaller(caller, grantOf(row), `Key ${row.id}`);
  }
  const rotations: Rotation[] = [];
  for (const old of ordered) {
    const lifetimeMs = Math.min(
      old.expires_at.getTime() - old.created_at.getTime(),
      MAX_EXPIRES_IN_DAYS * DAY_MS,
    );
    const issued = await issueKey(tx, now, actor, { ...grantOf(old), name: old.name, lifetimeMs }, old.id);
    const oldExpiresAt =
      overlapSeconds === 0
        ? now
        : new Date(Math.min(now.getTime() + overlapSeconds * 1000, old.expires_at.getTime()));
    await retireRotatedKey(tx, old.id, {
      rotatedTo: issued.row.id,
      revokedAt: overlapSeconds === 0 ? now : null,
      expiresAt: overlapSeconds === 0 ? old.expires_at : oldExpiresAt,
    });
    await notifyCredentialChanged(tx, old.id);
    const facts = {
      old_key_id: old.id,
      new_key_id: issued.row.id,
      old_expires_at: oldExpiresAt.toISOString(),
      overlap_seconds: overlapSeconds,
      rotated_by: issued.row.created_by,
      ...grantFacts(issued.row),
    };
    await emitEvent(tx, clock, {
      accountId: actor.principal.accountId,
      kind: 'key.rotated',
      subject: old.id,
      payload: facts,
    });
    await recordAudit(tx, clock, {
      accountId: actor.principal.accountId,
      actor: issued.row.created_by,
      action: 'key.rotated',
      subject: old.id,
      details: facts,
      network: actor.network,
    });
    rotations.push({ oldId: old.id, oldExpiresAt, issued });
  }
  return rotations;
}

/**
 * Revokes an active key of the account at once (a key in its rotation overlap counts as
 * active). 404 when there is none; 403 when a wallet-pinned caller names a key whose pin is not
 * within its own (or an unpinned key).
 */
export async function revokeKey(tx: DbExecutor, clock: Clock, actor: KeyActor, id: string): Promise<void> {
  const now = clock.now();
  const caller = await loadCaller(tx, actor.principal, now);
  const row = await lockActiveKey(tx, actor.principal.accountId, id, now);
  if (!row) {
    throw notFound(`No active API key ${id} on this account (unknown, already revoked or expired).`, {
      next: [{ method: 'GET', path: '/v1/keys', why: 'see which keys are active' }],
    });
  }
  assertPinWithinCaller(caller, row);
  await revokeKeyRow(tx, row.id, now);
  await notifyCredentialChanged(tx, row.id);
  const facts = { key_id: row.id, revoked_at: now.toISOString(), revoked_by: actorName(actor.principal) };
  await emitEvent(tx, clock, {
    accountId: actor.principal.accountId,
    kind: 'key.revoked',
    subject: row.id,
    payload: facts,
  });
  await recordAudit(tx, clock, {
    accountId: actor.principal.accountId,
    actor: actorName(actor.principal),
    action: 'key.revoked',
    subject: row.id,
    details: facts,
    network: actor.network,
  });
}

/** Revocation only narrows, so only the wallet pin matters (the spec's 403 rule). */
export function assertPinWithinCaller(caller: CallerGrant, target: Pick<ApiKeyRow, 'id' | 'wallets'>): void {
  if (caller.kind === 'session' || !caller.wallets) return;
  const pinned = caller.wallets;
  if (!target.wallets || target.wallets.some((w) => !pinned.includes(w))) {
    throw forbidden(
      `Key ${target.id} reaches ${target.wallets ? 'wallets' : 'every wallet'} outside the calling key's wallet pin.`,
    );
  }
}

function grantOf(row: ApiKeyRow): KeyGrant {
  return { scopes: row.scopes as Scope[], wallets: row.wallets, allowedIps: row.allowed_ips };
}

// ---------------------------------------------------------------------------------------------
// Responses

export interface CreatedKeyBody {
  id: string;
  token: string | null;
  name: string | null;
  scopes: string[];
  created_at: string;
  expires_at: string;
  allowed_ips: string[] | null;
  wallets: string[] | null;
}

/** The spec's create response; pass `withToken: false` for the body stored for replays. */
export function createdKeyBody(key: IssuedKey, withToken: boolean): CreatedKeyBody {
  return {
    id: key.row.id,
    token: withToken ? key.token : null,
    name: key.row.name,
    scopes: key.row.scopes,
    created_at: key.row.created_at.toISOString(),
    expires_at: key.row.expires_at.toISOString(),
    allowed_ips: key.row.allowed_ips,
    wallets: key.row.wallets,
  };
}

export function keyStatus(
  row: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>,
  now: Date,
): 'active' | 'revoked' | 'expired' {
  if (row.revoked_at) return 'revoked';
  return row.expires_at.getTime() <= now.getTime() ? 'expired' : 'active';
}

/** Every key of the account, newest first, without token material. */
export async function listKeys(db: DbExecutor, clock: Clock, accountId: string) {
  const now = clock.now();
  const rows = await listKeysOfAccount(db, accountId);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    allowed_ips: row.allowed_ips,
    wallets: row.wallets,
    status: keyStatus(row, now),
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
    rotated_from: row.rotated_from,
    rotated_to: row.rotated_to,
    created_by: row.created_by,
    last_used_at: row.last_used_at ? row.last_used_at.toISOString() : null,
  }));
}
