// POST /v1/account/offboard: the account is retired in place. In ONE transaction, with its events
// and audit facts: the webhook endpoint, secret and dead letters go (envelopes compacted to their
// hash), every live API key and session is revoked, every open delegation is revoked (unwind
// calldata returned), ready auto-top-up arrows leave the quiver (cancellation material returned),
// the contact is scrubbed and `offboarded_at` is set. The ledger, events, policies and audit facts
// stay; statement exports are deleted by the housekeeping sweep. See docs/decisions.md,
// "Offboarding".

import { zeroAccountCredentials } from '../modules/pm/index.ts';
import { actorName } from '../core/http/actor.ts';
import { getAddress } from 'viem';
import type { Clock } from '../core/clock.ts';
import type { Db, DbExecutor } from '../core/db/database.ts';
import { AppError, invalidRequest } from '../core/errors/app-error.ts';
import type { Actor } from '../core/http/actor.ts';
import type { Deadline } from '../core/http/deadline.ts';
import type { Scope } from '../core/http/route-table.ts';
import type { AppDeps } from '../deps.ts';
import { recordAudit } from '../modules/audit/index.ts';
import { notifyCredentialChanged } from '../modules/auth/credential-cache.ts';
import { ipAllowed, keyMeetsRule } from '../modules/auth/scopes.ts';
import { revokeAccountKeys, revokeAccountSessions } from '../modules/auth/account-part.ts';
import { findKeyForAuth, findSessionForAuth } from '../modules/auth/store.ts';
import { hashToken, sameHash, tokenKind } from '../modules/auth/tokens.ts';
import { arrowCancellation, listReadyArrowTokens, removeReadyArrows } from '../modules/billing/auto-topup.ts';
import { revocationNonce, revoke } from '../modules/delegations/service.ts';
import { findDelegation, openDelegations } from '../modules/delegations/store.ts';
import { findAccountById, lockAccount, retireAccount } from '../modules/account/store.ts';
import { emitEvent } from '../modules/events/index.ts';
import { retireAccountWebhooks } from '../modules/webhooks/store.ts';

export const OFFBOARD_REASON_MAX = 300;
export const OFFBOARD_DEFAULT_REASON = 'offboard';
/** What stays after offboarding (the spec's section 8: kept permanently; the account row retired). */
export const OFFBOARD_RETAINED = ['account', 'ledger', 'events', 'policies', 'audit_log'];
/** What a later sweep deletes (`housekeeping.statement_exports`). */
export const OFFBOARD_SCHEDULED = ['statement_exports'];

export interface OffboardRequest {
  confirm_wallet_address: string;
  reason: string;
}

interface Call {
  to: string;
  data: string;
}

export interface OffboardResult {
  offboarded: true;
  address: string;
  offboarded_at: string;
  deleted: {
    api_keys_revoked: number;
    sessions_revoked: number;
    credentials_zeroed: number;
    auto_topup_arrows_removed: number;
    webhook_secret_removed: boolean;
    webhook_failures_removed: number;
    contact_scrubbed: boolean;
  };
  retained: string[];
  scheduled: string[];
  delegations_revoked: Array<{
    id: string;
    account: string;
    uninstall_call: Call;
    invalidate_nonce_call: Call;
  }>;
  note: string;
  cancellation: { authorizations: Array<Record<string, unknown>> };
}

/** Chain reads made before the transaction, so it holds no lock while waiting on an RPC endpoint. */
export interface OffboardChainReads {
  /** The Kernel nonce for each open delegation's invalidate_nonce_call. */
  delegationNonces: Map<string, number>;
  /** EIP-712 name and version of each `<chain>:<token>` that ready arrows use; null when unreadable. */
  tokenDomains: Map<string, { name: string; version: string } | null>;
}

const domainKey = (chainId: number, token: string) => `${chainId}:${token.toLowerCase()}`;

const mismatch = () =>
  invalidRequest(
    "Invalid body: confirm_wallet_address is not this account's wallet address; nothing was changed.",
    {
      remediation:
        'Send the address you signed in with (any letter case). Offboarding is irreversible, hence the confirmation.',
    },
  );

const retired = () =>
  new AppError('UNAUTHORIZED', 'This account was offboarded; its credentials no longer work.', {
    remediation:
      'Repeat the offboard request with its original Idempotency-Key to read its result again. An offboarded account cannot sign in.',
  });

/** 400 unless `confirm` is the account's address (case-insensitive). Call before the chain reads. */
export async function checkOffboardConfirmation(db: DbExecutor, accountId: string, confirm: string) {
  const account = await findAccountById(db, accountId);
  if (!account || account.offboarded_at) throw retired();
  if (account.address !== confirm.toLowerCase()) throw mismatch();
}

/**
 * Reads, before the transaction, the next Kernel nonce of each open delegation's account (the
 * stored nonce + 1 when the chain cannot be read) and the EIP-712 domain of each token the ready
 * arrows use (null when unreadable: the cancellation then says what to fill in). Checks the time
 * budget before each call to a chain.
 */
export async function readOffboardChainState(
  deps: AppDeps,
  accountId: string,
  deadline?: Deadline,
): Promise<OffboardChainReads> {
  const delegationNonces = new Map<string, number>();
  for (const { id } of await openDelegations(deps.db, accountId)) {
    const row = await findDelegation(deps.db, accountId, id);
    if (!row) continue;
    deadline?.check('reading the Kernel nonce of a delegated account');
    delegationNonces.set(id, await revocationNonce(deps, row));
  }
  const tokenDomains = new Map<string, { name: string; version: string } | null>();
  for (const { chainId, token } of await listReadyArrowTokens(deps.db, accountId)) {
    deadline?.check("reading an arrow token's EIP-712 domain");
    let domain: { name: string; version: string } | null = null;
    try {
      if (deps.chain?.supports(chainId)) {
        const read = await deps.chain.tokenDomain(chainId, getAddress(token));
        domain = { name: read.name, version: read.version };
      }
    } catch {
      domain = null;
    }
    tokenDomains.set(domainKey(chainId, token), domain);
  }
  return { delegationNonces, tokenDomains };
}

/** The offboard result's `note`: what was done, what is kept, and what only the owner can still do. */
export function offboardNote(address: string): string {
  return (
    `Account ${address} is retired in place: every API key and session is revoked, no credential ` +
    'of the account works any more and signing in with this address answers 403. The ledger, ' +
    'events, policies and audit facts are retained. Delegations: the service no longer honours ' +
    'them; to remove a grant on-chain the owner sends its invalidate_nonce_call (and, if the grant ' +
    'was ever used, its uninstall_call) from the account itself. Auto-top-up: removing the ' +
    "service's copy of an arrow does not revoke the authorization on-chain; it stays usable by " +
    'whoever holds it until its valid_before. To cancel one, the payer signs ' +
    'cancellation.authorizations[i].typed_data and sends the signature to the token with ' +
    'cancelAuthorization. An arrow already being settled finishes on its own. Statement exports ' +
    'are deleted by the next housekeeping sweep (hourly). Repeating this request with the same ' +
    'Idempotency-Key within 7 days returns this result again.'
  );
}

/**
 * The offboarding, in `tx` (the route's `mutate`): everything or nothing. Errors: UNAUTHORIZED
 * (the account was offboarded meanwhile), INVALID_REQUEST (confirm_wallet_address is not the
 * account's address; nothing changed). Every process's credential cache hears of it by NOTIFY
 * (the account id) when `tx` commits; the caller invalidates its own cache after the commit.
 */
export async function offboardAccount(
  tx: DbExecutor,
  deps: AppDeps,
  actor: Actor,
  request: OffboardRequest,
  reads: OffboardChainReads,
): Promise<OffboardResult> {
  const clock: Clock = deps.clock;
  const accountId = actor.principal.accountId;
  const account = await lockAccount(tx, accountId);
  if (!account || account.offboarded_at) throw retired();
  if (account.address !== request.confirm_wallet_address.toLowerCase()) throw mismatch();
  const now = clock.now();
  const by = actorName(actor);

  // First: with the endpoint gone, the events below get no outbox row (nothing can sign them).
  const webhooks = await retireAccountWebhooks(tx, accountId, now);

  const keyIds = await revokeAccountKeys(tx, accountId, now);
  const sessionIds = await revokeAccountSessions(tx, accountId, now);
  for (const keyId of keyIds) {
    await emitEvent(tx, clock, {
      accountId,
      kind: 'key.revoked',
      subject: keyId,
      payload: { key_id: keyId, revoked_at: now.toISOString(), revoked_by: by, reason: 'offboarding' },
    });
  }
  // One notification for the account: every process drops each of its cached credentials.
  await notifyCredentialChanged(tx, accountId);

  const delegations: OffboardResult['delegations_revoked'] = [];
  for (const open of await openDelegations(tx, accountId, true)) {
    const nonce = reads.delegationNonces.get(open.id) ?? open.kernel_nonce + 1;
    const revoked = await revoke(tx, deps, actor, open.id, nonce);
    delegations.push({
      id: revoked.id,
      account: getAddress(open.wallet),
      uninstall_call: revoked.revocation.uninstall_call,
      invalidate_nonce_call: revoked.revocation.invalidate_nonce_call,
    });
  }

  const arrows = await removeReadyArrows(tx, clock, actor, accountId);
  const credentialsZeroed = await zeroAccountCredentials(tx, accountId, now);
  const authorizations = arrows.map((a) =>
    arrowCancellation(a, reads.tokenDomains.get(domainKey(a.chainId, a.token)) ?? null),
  );

  await retireAccount(tx, accountId, now);

  const deleted: OffboardResult['deleted'] = {
    api_keys_revoked: keyIds.length,
    sessions_revoked: sessionIds.length,
    credentials_zeroed: credentialsZeroed,
    auto_topup_arrows_removed: arrows.length,
    webhook_secret_removed: webhooks.secretRemoved,
    webhook_failures_removed: webhooks.failuresRemoved,
    contact_scrubbed: account.contact !== null,
  };
  const address = getAddress(account.address);
  const facts = {
    address,
    reason: request.reason,
    offboarded_at: now.toISOString(),
    ...deleted,
    api_key_ids: keyIds,
    session_ids: sessionIds,
    delegation_ids: delegations.map((d) => d.id),
    arrow_ids: arrows.map((a) => a.id),
    webhook_endpoint_cleared: webhooks.endpointCleared,
    webhook_deliveries_cancelled: webhooks.deliveriesCancelled,
    webhook_envelopes_compacted: webhooks.envelopesCompacted,
  };
  await emitEvent(tx, clock, { accountId, kind: 'account.offboarded', subject: accountId, payload: facts });
  await recordAudit(tx, clock, {
    accountId,
    actor: by,
    action: 'account.offboarded',
    subject: accountId,
    details: facts,
    network: actor.network,
  });

  return {
    offboarded: true,
    address,
    offboarded_at: now.toISOString(),
    deleted,
    retained: [...OFFBOARD_RETAINED],
    scheduled: [...OFFBOARD_SCHEDULED],
    delegations_revoked: delegations,
    note: offboardNote(address),
    cancellation: { authorizations },
  };
}

/**
 * The account whose offboard result a refused bearer credential may replay: the credential must
 * be one the offboarding itself revoked (live until then: revoked at `offboarded_at`), not yet
 * past its expiry, and pass the guard's other checks for this route (an admin key, unpinned, from
 * an allowed IP). Null otherwise: the caller then gets the guard's 401.
 */
export async function retiredCredentialAccount(
  db: Db,
  clock: Clock,
  authorization: string | undefined,
  clientIp: string,
): Promise<string | null> {
  const token = /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
  const kind = token ? tokenKind(token) : null;
  if (!token || !kind) return null;
  const hash = hashToken(token);
  const row =
    kind === 'session'
      ? await findSessionForAuth(db, hash).then(
          (r) => r && { ...r, scopes: null, wallets: null, allowed_ips: null },
        )
      : await findKeyForAuth(db, hash);
  if (!row?.offboarded_at || !row.revoked_at || !sameHash(row.token_hash, hash)) return null;
  if (new Date(row.revoked_at).getTime() !== new Date(row.offboarded_at).getTime()) return null;
  if (new Date(row.expires_at).getTime() <= clock.now().getTime()) return null;
  if (row.scopes && !keyMeetsRule(row.scopes as Scope[], 'admin')) return null;
  if (row.wallets) return null;
  if (row.allowed_ips && !ipAllowed(clientIp, row.allowed_ips)) return null;
  return row.account_id;
}
