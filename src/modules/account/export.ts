// GET /v1/account/export: everything the service keeps about one account, read in one
// repeatable-read snapshot. Credentials appear as metadata only: never a token, a token hash,
// sealed ciphertext or a signature (see docs/decisions.md, "Account export").

import { accountWatch } from '../chainwatch/index.ts';
import { exportOrders, exportPositions, listCredentialViews } from '../pm/index.ts';
import type { Clock } from '../../core/clock.ts';
import { type Db, type Tx, withTransaction } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { formatUsd } from '../../core/money.ts';
import { exportAutoTopup } from '../billing/auto-topup.ts';
import { listStatementExportKeys } from '../statements/index.ts';

export const EXPORT_VERSION = 1;
/** Each bounded array keeps at most this many items, the newest; its name then goes in `truncated`. */
export const EXPORT_ARRAY_BOUND = 10_000;

type Json = Record<string, unknown>;

export interface AccountExport {
  export_version: number;
  generated_at: string;
  truncated: string[];
  account: {
    address: string;
    contact: string | null;
    kind: string;
    created_at: string;
    offboarded_at: string | null;
  };
  api_keys: Json[];
  sessions: Json[];
  policies: Json[];
  delegations: Json[];
  intents: Json[];
  ledger_entries: Json[];
  payment_credits: Json[];
  balance: { micro: string } | null;
  events: Json[];
  webhooks: { secret_configured: boolean; failures: Json[] };
  auto_topup: { rule: Json | null; authorizations: Json[] } | null;
  venue_credentials: Json[];
  pm_orders: Json[];
  pm_positions: Json[];
  audit_log: Json[];
  statements_manifest: { bucket_bound: boolean; keys: string[] };
  /** The wallets the chain watcher keeps books for, each with its chain's cursor (docs/ledger.md). */
  watched_wallets: Json[];
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

function isoOrNull(value: Date | string | null): string | null {
  return value === null ? null : iso(value);
}

function jsonValue(value: unknown): unknown {
  return typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
}

/** Cuts a newest-first list fetched with one row beyond the bound, noting the cut. */
function bounded<T>(name: string, rows: T[], bound: number, truncated: string[]): T[] {
  if (rows.length <= bound) return rows;
  truncated.push(name);
  return rows.slice(0, bound);
}

export async function buildAccountExport(
  db: Db,
  clock: Clock,
  accountId: string,
  bound: number = EXPORT_ARRAY_BOUND,
  /** Whether statement exports go to an S3 bucket (config), for `statements_manifest.bucket_bound`. */
  statementsBucketBound = false,
): Promise<AccountExport> {
  return withTransaction(db, (tx) => readExport(tx, clock, accountId, bound, statementsBucketBound), {
    isolation: 'repeatable read',
  });
}

async function readExport(
  tx: Tx,
  clock: Clock,
  accountId: string,
  bound: number,
  statementsBucketBound: boolean,
): Promise<AccountExport> {
  const account = await tx
    .selectFrom('accounts')
    .select(['address', 'contact', 'kind', 'created_at', 'offboarded_at'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!account) throw new AppError('UNAUTHORIZED', 'The account of this credential does not exist.');
  const generatedAt = clock.now();
  const truncated: string[] = [];
  const fetch = bound + 1;

  const apiKeys = await tx
    .selectFrom('api_keys')
    .select([
      'id',
      'name',
      'scopes',
      'wallets',
      'allowed_ips',
      'created_at',
      'expires_at',
      'revoked_at',
      'rotated_to',
      'rotated_from',
      'created_by',
    ])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(fetch)
    .execute();

  const pmOrders = await exportOrders(tx, accountId, fetch);
  const pmPositions = await exportPositions(tx, accountId, fetch);
  const watched = await accountWatch(tx, accountId, fetch);
  const venueCredentials = await listCredentialViews(tx, accountId, {
    limit: fetch,
    offset: 0,
    includeRevoked: true,
  });

  const sessions = await tx
    .selectFrom('sessions')
    .select(['id', 'created_at', 'expires_at', 'revoked_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(fetch)
    .execute();

  const policies = await tx
    .selectFrom('policies')
    .select(['wallet', 'version', 'hash', 'document', 'defaulted', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('wallet')
    .orderBy('version', 'desc')
    .limit(fetch)
    .execute();

  // Not selected: enable_sig (the owner's signature) and anything derived from signing.
  const delegations = await tx
    .selectFrom('delegations')
    .select([
      'id',
      'wallet',
      'chain_id',
      'status',
      'permission_id',
      'validation_id',
      'kernel_version',
      'session_key',
      'modules',
      'scope',
      'valid_after',
      'valid_until',
      'account_deployed',
      'policy_version',
      'renewed_from',
      'owner',
      'account_index',
      'created_at',
      'confirmed_at',
      'revoked_at',
      'expired_at',
    ])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(fetch)
    .execute();

  const intents = await tx
    .selectFrom('intents')
    .select([
      'id',
      'wallet',
      'chain_id',
      'kind',
      'status',
      'policy_version',
      'policy_hash',
      'params',
      'report',
      'value_micro_usd',
      'fee_micro_usd',
      'created_at',
      'updated_at',
    ])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(fetch)
    .execute();

  const ledgerEntries = await tx
    .selectFrom('ledger_entries')
    .innerJoin('ledger_groups', 'ledger_groups.id', 'ledger_entries.group_id')
    .select([
      'ledger_entries.seq',
      'ledger_entries.group_id',
      'ledger_groups.kind',
      'ledger_groups.settlement_id',
      'ledger_groups.policy_hash',
      'ledger_groups.reverses',
      'ledger_groups.memo',
      'ledger_entries.ledger_account',
      'ledger_entries.asset',
      'ledger_entries.amount',
      'ledger_groups.created_at',
    ])
    .where('ledger_groups.account_id', '=', accountId)
    .orderBy('ledger_entries.seq', 'desc')
    .limit(fetch)
    .execute();

  // Payments to the platform (top-ups, x402 fees, auto-top-up arrows): never the signature, nor
  // the request the payment carried.
  const paymentCredits = await tx
    .selectFrom('payment_settlements')
    .select([
      'id',
      'purpose',
      'chain_id',
      'token',
      'payer',
      'payee',
      'value',
      'nonce',
      'status',
      'tx_hash',
      'fail_reason',
      'created_at',
      'settled_at',
    ])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(fetch)
    .execute();

  const balance = await tx
    .selectFrom('prepaid_balances')
    .select(['balance_micro'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();

  const events = await tx
    .selectFrom('events')
    .select(['seq', 'id', 'kind', 'subject', 'payload', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('seq', 'desc')
    .limit(fetch)
    .execute();

  const endpoint = await tx
    .selectFrom('webhook_endpoints')
    .select(['secret_sealed'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();

  // Not selected: the body of each dead letter (the events themselves are exported above).
  const failures = await tx
    .selectFrom('webhook_dead_letters')
    .select([
      'id',
      'event_id',
      'kind',
      'attempts',
      'last_status',
      'last_error',
      'first_attempt_at',
      'dead_at',
    ])
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(fetch)
    .execute();

  const audit = await tx
    .selectFrom('audit_log')
    .leftJoin('network_context', 'network_context.audit_id', 'audit_log.id')
    .select([
      'audit_log.seq',
      'audit_log.id',
      'audit_log.actor',
      'audit_log.action',
      'audit_log.subject',
      'audit_log.details',
      'audit_log.created_at',
      'network_context.client_ip',
      'network_context.user_agent',
    ])
    .where('audit_log.account_id', '=', accountId)
    .orderBy('audit_log.seq', 'desc')
    .limit(fetch)
    .execute();

  const statementKeys = await listStatementExportKeys(tx, accountId, fetch);
  const autoTopup = await exportAutoTopup(tx, accountId, fetch);

  return {
    export_version: EXPORT_VERSION,
    generated_at: generatedAt.toISOString(),
    truncated,
    account: {
      address: account.address,
      contact: account.contact,
      kind: account.kind,
      created_at: iso(account.created_at),
      offboarded_at: isoOrNull(account.offboarded_at),
    },
    api_keys: bounded('api_keys', apiKeys, bound, truncated).map((k) => ({
      id: k.id,
      name: k.name,
      scopes: k.scopes,
      wallets: k.wallets,
      allowed_ips: k.allowed_ips,
      created_at: iso(k.created_at),
      expires_at: iso(k.expires_at),
      revoked_at: isoOrNull(k.revoked_at),
      rotated_to: k.rotated_to,
      rotated_from: k.rotated_from,
      created_by: k.created_by,
    })),
    sessions: bounded('sessions', sessions, bound, truncated).map((s) => ({
      id: s.id,
      created_at: iso(s.created_at),
      expires_at: iso(s.expires_at),
      revoked_at: isoOrNull(s.revoked_at),
    })),
    policies: bounded('policies', policies, bound, truncated).map((p) => ({
      wallet: p.wallet,
      version: p.version,
      hash: p.hash,
      document: jsonValue(p.document),
      defaulted: p.defaulted,
      created_at: iso(p.created_at),
    })),
    delegations: bounded('delegations', delegations, bound, truncated).map((d) => ({
      id: d.id,
      wallet: d.wallet,
      chain_id: d.chain_id,
      status: d.status,
      permission_id: d.permission_id,
      validation_id: d.validation_id,
      kernel_version: d.kernel_version,
      session_key: d.session_key,
      modules: jsonValue(d.modules),
      scope: jsonValue(d.scope),
      valid_after: Number(d.valid_after),
      valid_until: Number(d.valid_until),
      account_deployed: d.account_deployed,
      policy_version: d.policy_version,
      renewed_from: d.renewed_from,
      owner: d.owner,
      account_index: d.account_index,
      created_at: iso(d.created_at),
      confirmed_at: isoOrNull(d.confirmed_at),
      revoked_at: isoOrNull(d.revoked_at),
      expired_at: isoOrNull(d.expired_at),
    })),
    intents: bounded('intents', intents, bound, truncated).map((i) => ({
      id: i.id,
      wallet: i.wallet,
      chain_id: i.chain_id,
      kind: i.kind,
      status: i.status,
      policy_version: i.policy_version,
      policy_hash: i.policy_hash,
      params: jsonValue(i.params),
      report: jsonValue(i.report),
      value_usd: formatUsd(BigInt(i.value_micro_usd)),
      fee_usd: formatUsd(BigInt(i.fee_micro_usd)),
      created_at: iso(i.created_at),
      updated_at: iso(i.updated_at),
    })),
    ledger_entries: bounded('ledger_entries', ledgerEntries, bound, truncated).map((e) => ({
      seq: Number(e.seq),
      group_id: e.group_id,
      kind: e.kind,
      settlement_id: e.settlement_id,
      policy_hash: e.policy_hash,
      reverses: e.reverses,
      memo: jsonValue(e.memo),
      ledger_account: e.ledger_account,
      asset: e.asset,
      amount: String(e.amount),
      created_at: iso(e.created_at),
    })),
    payment_credits: bounded('payment_credits', paymentCredits, bound, truncated).map((p) => ({
      id: p.id,
      purpose: p.purpose,
      chain_id: p.chain_id,
      token: p.token,
      payer: p.payer,
      payee: p.payee,
      value: p.value,
      nonce: p.nonce,
      status: p.status,
      tx_hash: p.tx_hash,
      fail_reason: p.fail_reason,
      created_at: p.created_at.toISOString(),
      settled_at: p.settled_at?.toISOString() ?? null,
    })),
    balance: balance ? { micro: String(balance.balance_micro) } : null,
    events: bounded('events', events, bound, truncated).map((e) => ({
      id: e.id,
      kind: e.kind,
      subject: e.subject,
      created_at: iso(e.created_at),
      data: jsonValue(e.payload),
    })),
    webhooks: {
      secret_configured: endpoint?.secret_sealed != null,
      failures: bounded('webhooks.failures', failures, bound, truncated).map((f) => ({
        id: Number(f.id),
        event_id: f.event_id,
        kind: f.kind,
        attempts: f.attempts,
        last_status: f.last_status,
        last_error: f.last_error,
        first_attempt_at: iso(f.first_attempt_at),
        dead_at: iso(f.dead_at),
      })),
    },
    auto_topup: autoTopup && {
      rule: autoTopup.rule,
      authorizations: bounded('auto_topup.authorizations', autoTopup.authorizations, bound, truncated),
    },
    // Metadata only, revoked ones included: never sealed material.
    venue_credentials: bounded('venue_credentials', venueCredentials, bound, truncated).map((c) => ({
      ...c,
    })),
    // Without signatures: what Purser recorded of each order.
    pm_orders: bounded('pm_orders', pmOrders, bound, truncated),
    // Outcome shares held per wallet and token, from the journaled fills.
    pm_positions: bounded('pm_positions', pmPositions, bound, truncated),
    audit_log: bounded('audit_log', audit, bound, truncated).map((a) => ({
      id: a.id,
      actor: a.actor,
      action: a.action,
      subject: a.subject,
      details: jsonValue(a.details),
      created_at: iso(a.created_at),
      client_ip: a.client_ip,
      user_agent: a.user_agent,
    })),
    statements_manifest: {
      bucket_bound: statementsBucketBound,
      keys: bounded('statements_manifest.keys', statementKeys, bound, truncated),
    },
    watched_wallets: bounded('watched_wallets', watched, bound, truncated),
  };
}
