import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import type { Principal, RouteDefinition, Scope } from '../../core/http/route-table.ts';
import type { Authenticator } from '../../deps.ts';
import { USER_AGENT_MAX } from '../audit/index.ts';
import type { CredentialCache, VerifiedCredential } from './credential-cache.ts';
import { ipAllowed, keyMeetsRule, walletsOfRoute } from './scopes.ts';
import { findKeyForAuth, findSessionForAuth, recordCredentialUse } from './store.ts';
import { hashToken, sameHash, tokenKind } from './tokens.ts';

export interface AuthenticatorDeps {
  db: Db;
  clock: Clock;
  config: Config;
  log: { warn(obj: object, msg: string): void };
  cache?: CredentialCache;
}

const USE_RECORD_INTERVAL_MS = 60_000;
const ALL: Scope[] = ['read', 'write', 'admin', 'supervisor'];

const unauthorized = (message: string) =>
  new AppError('UNAUTHORIZED', message, {
    next: [{ method: 'POST', path: '/v1/auth/challenge', why: 'sign in with your wallet for a new session' }],
  });
const forbidden = (message: string, remediation?: string) =>
  new AppError('FORBIDDEN', message, remediation ? { remediation } : {});

/**
 * The guard of every bearer route: who is calling (401 when nobody valid), and whether this
 * credential may do this here (403: scope, IP pin, wallet pin, executor address).
 */
export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const lastRecorded = new Map<string, number>();

  async function lookup(kind: 'session' | 'key', hash: string): Promise<VerifiedCredential | null> {
    const cached = deps.cache?.get(hash);
    if (cached) return cached;
    const version = deps.cache?.version() ?? 0;
    const row =
      kind === 'session'
        ? await findSessionForAuth(deps.db, hash).then(
            (r) => r && { ...r, scopes: ALL, wallets: null, allowed_ips: null },
          )
        : await findKeyForAuth(deps.db, hash);
    if (row?.offboarded_at && sameHash(row.token_hash, hash)) {
      // A retired account: no sign-in can help, so none is offered.
      throw new AppError('UNAUTHORIZED', 'The account of this credential was offboarded and is retired.', {
        remediation:
          'An offboarded account cannot be used or signed in to again; its records are retained. ' +
          'Repeat the offboard request with its original Idempotency-Key to read its result.',
        next: [],
      });
    }
    if (!row || row.revoked_at || !sameHash(row.token_hash, hash)) return null;
    const credential: VerifiedCredential = {
      credentialId: row.id,
      kind,
      accountId: row.account_id,
      address: row.address,
      scopes: row.scopes as Scope[],
      wallets: row.wallets,
      allowedIps: row.allowed_ips,
      expiresAt: new Date(row.expires_at),
    };
    deps.cache?.set(hash, credential, version);
    return credential;
  }

  /** Network context of key uses, written at most once a minute per credential, address and agent. */
  function noteUse(credential: VerifiedCredential, req: FastifyRequest): void {
    const userAgent = (typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : '').slice(
      0,
      USER_AGENT_MAX,
    );
    const at = deps.clock.now();
    const key = `${credential.credentialId}|${req.ip}|${userAgent}`;
    const last = lastRecorded.get(key);
    if (last !== undefined && at.getTime() - last < USE_RECORD_INTERVAL_MS) return;
    lastRecorded.set(key, at.getTime());
    if (lastRecorded.size > 50_000) lastRecorded.clear();
    recordCredentialUse(deps.db, {
      credentialId: credential.credentialId,
      accountId: credential.accountId,
      clientIp: req.ip,
      userAgent,
      at,
    }).catch((err: unknown) => {
      lastRecorded.delete(key);
      deps.log.warn({ err }, 'could not record credential use');
    });
  }

  return {
    async authenticate(req: FastifyRequest, route: RouteDefinition): Promise<Principal> {
      const header = req.headers.authorization;
      if (!header) throw unauthorized('This route needs a bearer credential: Authorization: Bearer <token>.');
      const match = /^Bearer ([^\s]+)$/i.exec(header);
      const token = match?.[1];
      const kind = token ? tokenKind(token) : null;
      if (!token || !kind) {
        throw unauthorized(
          'The Authorization header is malformed: expected "Bearer pss_…" or "Bearer psk_…".',
        );
      }
      const hash = hashToken(token);
      const credential = await lookup(kind, hash);
      if (!credential) throw unauthorized('The credential is unknown or revoked.');
      if (credential.expiresAt.getTime() <= deps.clock.now().getTime()) {
        throw unauthorized('The credential has expired.');
      }
      if (credential.allowedIps && !ipAllowed(req.ip, credential.allowedIps)) {
        throw forbidden(
          'This API key is pinned to other IP addresses.',
          "Call from an address in the key's allowed_ips, or use a key without that pin.",
        );
      }
      const rule = route.scope ?? 'read';
      if (credential.kind === 'key' && !keyMeetsRule(credential.scopes, rule)) {
        throw forbidden(
          `This API key lacks the scope this route needs (${rule}).`,
          'Use a session or an API key with the required scope; see docs/scopes.md.',
        );
      }
      if (route.class === 'executor') {
        if (!deps.config.executorAddress || credential.address !== deps.config.executorAddress) {
          throw forbidden('Only the treasury executor may call this route.');
        }
      }
      if (credential.wallets) {
        if (route.wallet === false) {
          throw forbidden(
            'A wallet-pinned API key reaches only wallet-bearing routes.',
            'Use an unpinned key or a session for account-wide routes.',
          );
        }
        const wallets = await walletsOfRoute(deps.db, credential.accountId, req, route.wallet);
        const pinned = credential.wallets;
        if (!wallets || wallets.some((w) => !pinned.includes(w))) {
          throw forbidden(
            "The request's wallet is outside this API key's wallet pin.",
            'Use a key pinned to this wallet, or a session.',
          );
        }
      }
      if (credential.kind === 'key') noteUse(credential, req);
      return {
        accountId: credential.accountId,
        kind: credential.kind,
        credentialId: credential.credentialId,
        scopes: credential.scopes,
        wallets: credential.wallets,
        address: credential.address,
      };
    },
  };
}
