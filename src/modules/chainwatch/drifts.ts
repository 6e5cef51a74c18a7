// Differences between the books and the chain (table ledger_drifts, migration 0040), found by
// reconciliation (reconcile.ts): never fixed silently. A drift is suspected when first seen, raised
// (`ledger.drift`) when it is still there a grace period later, and resolved when books and chain
// agree again or an operator books an adjustment with a reason (audited).

import { sql, type Selectable } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { AppError, notFound } from '../../core/errors/app-error.ts';
import { newId } from '../../core/ids.ts';
import { recordAudit, type NetworkContext } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { externalAccount, postGroup, transfer, walletAccount } from '../ledger/index.ts';
import { assetMetadata, type TokenRegistry } from '../registry/index.ts';

export interface LedgerDriftsTable {
  id: string;
  account_id: string;
  chain_id: number;
  wallet: string;
  asset: string;
  ledger_amount: string;
  chain_amount: string;
  block: string;
  first_seen_at: Timestamp;
  raised_at: Timestamp | null;
  resolved_at: Timestamp | null;
  resolution: 'agreed' | 'adjusted' | null;
  reason: string | null;
  adjustment_group_id: string | null;
  updated_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    ledger_drifts: LedgerDriftsTable;
  }
}

export type DriftState = 'suspected' | 'open' | 'resolved';

/** A drift as the API shows it. */
export interface DriftView {
  id: string;
  state: DriftState;
  chain_id: number;
  wallet: string;
  asset: string;
  ledger: string;
  chain: string;
  /** chain − ledger: what an adjustment books into the wallet. */
  difference: string;
  block: string;
  first_seen_at: string;
  raised_at: string | null;
  resolved_at: string | null;
  resolution: 'agreed' | 'adjusted' | null;
  reason: string | null;
  adjustment_group_id: string | null;
}

export function driftView(r: Selectable<LedgerDriftsTable>): DriftView {
  const state: DriftState = r.resolved_at !== null ? 'resolved' : r.raised_at !== null ? 'open' : 'suspected';
  return {
    id: r.id,
    state,
    chain_id: r.chain_id,
    wallet: r.wallet,
    asset: r.asset,
    ledger: String(r.ledger_amount),
    chain: String(r.chain_amount),
    difference: (BigInt(r.chain_amount) - BigInt(r.ledger_amount)).toString(),
    block: String(r.block),
    first_seen_at: new Date(r.first_seen_at).toISOString(),
    raised_at: r.raised_at === null ? null : new Date(r.raised_at).toISOString(),
    resolved_at: r.resolved_at === null ? null : new Date(r.resolved_at).toISOString(),
    resolution: r.resolution,
    reason: r.reason,
    adjustment_group_id: r.adjustment_group_id,
  };
}

/** What reconciliation found for one (wallet, asset) at a block. */
export interface Comparison {
  accountId: string;
  chainId: number;
  wallet: string;
  asset: string;
  ledger: bigint;
  chain: bigint;
  block: bigint;
}

/** The payload of `ledger.drift` (and of `ledger.drift_resolved`). */
function driftPayload(view: DriftView, symbol: string | null): Record<string, unknown> {
  return {
    id: view.id,
    chain_id: view.chain_id,
    wallet: view.wallet,
    asset: view.asset,
    symbol,
    ledger: view.ledger,
    chain: view.chain,
    difference: view.difference,
    block: view.block,
    state: view.state,
    ...(view.resolution ? { resolution: view.resolution, reason: view.reason } : {}),
  };
}

/**
 * Records the comparisons of one chunk of wallets in `tx`: a difference starts (or updates) a
 * drift, raised with `ledger.drift` once it was first seen at least `raiseAfterMs` ago; agreement
 * resolves a raised drift (`agreed`, `ledger.drift_resolved`) and forgets a suspected one.
 */
export async function recordComparisons(
  tx: DbExecutor,
  clock: Clock,
  comparisons: Comparison[],
  options: { raiseAfterMs: number; registry: TokenRegistry },
): Promise<{ suspected: number; raised: number; agreed: number }> {
  const out = { suspected: 0, raised: 0, agreed: 0 };
  if (comparisons.length === 0) return out;
  const chainId = comparisons[0]!.chainId;
  const wallets = [...new Set(comparisons.map((c) => c.wallet))];
  const open = await tx
    .selectFrom('ledger_drifts')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('wallet', 'in', wallets)
    .where('resolved_at', 'is', null)
    .forUpdate()
    .execute();
  const byKey = new Map(open.map((d) => [`${d.wallet}:${d.asset}`, d]));
  const now = clock.now();
  const raiseBy = now.getTime() - options.raiseAfterMs;
  for (const c of comparisons) {
    const existing = byKey.get(`${c.wallet}:${c.asset}`);
    if (c.ledger === c.chain) {
      if (!existing) continue;
      if (existing.raised_at === null) {
        await tx.deleteFrom('ledger_drifts').where('id', '=', existing.id).execute();
        continue;
      }
      const resolved = await tx
        .updateTable('ledger_drifts')
        .set({ resolved_at: now, resolution: 'agreed', updated_at: now, block: c.block.toString() })
        .where('id', '=', existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await emitEvent(tx, clock, {
        accountId: c.accountId,
        kind: 'ledger.drift_resolved',
        subject: existing.id,
        payload: driftPayload(driftView(resolved), assetMetadata(options.registry, c.asset).symbol),
      });
      out.agreed += 1;
      continue;
    }
    const firstSeen = existing ? new Date(existing.first_seen_at).getTime() : now.getTime();
    const raise = (existing?.raised_at ?? null) === null && firstSeen <= raiseBy;
    const values = {
      ledger_amount: c.ledger.toString(),
      chain_amount: c.chain.toString(),
      block: c.block.toString(),
      updated_at: now,
      ...(raise ? { raised_at: now } : {}),
    };
    const row = existing
      ? await tx
          .updateTable('ledger_drifts')
          .set(values)
          .where('id', '=', existing.id)
          .returningAll()
          .executeTakeFirstOrThrow()
      : await tx
          .insertInto('ledger_drifts')
          .values({
            id: newId('drf'),
            account_id: c.accountId,
            chain_id: c.chainId,
            wallet: c.wallet,
            asset: c.asset,
            first_seen_at: now,
            ...values,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
    if (raise) {
      await emitEvent(tx, clock, {
        accountId: c.accountId,
        kind: 'ledger.drift',
        subject: row.id,
        payload: driftPayload(driftView(row), assetMetadata(options.registry, c.asset).symbol),
      });
      out.raised += 1;
    } else if (!existing) {
      out.suspected += 1;
    }
  }
  return out;
}

/** Drifts of an account (one wallet's with `wallet`), newest first, after `cursor` (an id). */
export async function listDrifts(
  db: DbExecutor,
  filter: {
    accountId: string | null;
    wallet: string | null;
    state: 'open' | 'resolved' | 'all';
    limit: number;
    cursor: string | null;
  },
): Promise<{ drifts: DriftView[]; next_cursor: string | null }> {
  let q = db.selectFrom('ledger_drifts').selectAll();
  if (filter.accountId !== null) q = q.where('account_id', '=', filter.accountId);
  if (filter.wallet !== null) q = q.where('wallet', '=', filter.wallet.toLowerCase());
  if (filter.state === 'open') q = q.where('resolved_at', 'is', null).where('raised_at', 'is not', null);
  if (filter.state === 'resolved') q = q.where('resolved_at', 'is not', null);
  if (filter.cursor !== null) {
    const at = await db
      .selectFrom('ledger_drifts')
      .select(['first_seen_at', 'id'])
      .where('id', '=', filter.cursor)
      .executeTakeFirst();
    if (at) {
      q = q.where((eb) =>
        eb.or([
          eb('first_seen_at', '<', at.first_seen_at),
          eb.and([eb('first_seen_at', '=', at.first_seen_at), eb('id', '<', at.id)]),
        ]),
      );
    }
  }
  const rows = await q
    .orderBy('first_seen_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
  const page = rows.slice(0, filter.limit);
  return {
    drifts: page.map(driftView),
    next_cursor: rows.length > filter.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}

/**
 * Every account's unresolved drifts (open and suspected), newest first by the time each was raised
 * (a suspected one: first seen), at most `limit`, each with its account, and how many there are in
 * all. The operator's alerts show them whatever their age.
 */
export async function unresolvedDrifts(
  db: DbExecutor,
  limit: number,
): Promise<{ drifts: Array<{ accountId: string; drift: DriftView }>; total: number }> {
  const rows = await db
    .selectFrom('ledger_drifts')
    .selectAll()
    .select((eb) => eb.fn.countAll<string>().over().as('total'))
    .where('resolved_at', 'is', null)
    .orderBy(sql`coalesce(raised_at, first_seen_at)`, 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return {
    drifts: rows.map(({ total: _total, ...r }) => ({ accountId: r.account_id, drift: driftView(r) })),
    total: rows.length === 0 ? 0 : Number(rows[0]!.total),
  };
}

/**
 * An operator's adjustment of an open drift, in `tx`: books the difference into the wallet against
 * `external:<chain>` (kind `chain.adjustment`, settlement `adjust:<drift id>`) with the reason,
 * resolves the drift (`adjusted`), records the audit fact `ledger.adjusted` and emits
 * `ledger.drift_resolved`. A drift that is not open (unknown, suspected, resolved) is refused.
 */
export async function adjustDrift(
  tx: DbExecutor,
  clock: Clock,
  params: {
    driftId: string;
    reason: string;
    actor: string;
    network: NetworkContext | null;
    registry: TokenRegistry;
  },
): Promise<DriftView> {
  const drift = await tx
    .selectFrom('ledger_drifts')
    .selectAll()
    .where('id', '=', params.driftId)
    .forUpdate()
    .executeTakeFirst();
  if (!drift) throw notFound(`No drift ${params.driftId}.`);
  if (drift.resolved_at !== null || drift.raised_at === null) {
    throw new AppError(
      'CONFLICT',
      drift.resolved_at !== null
        ? `Drift ${drift.id} is resolved already (${drift.resolution}).`
        : `Drift ${drift.id} is only suspected: reconciliation has not confirmed it yet.`,
      {
        remediation:
          drift.resolved_at !== null
            ? 'Nothing to adjust. List the open drifts with GET /v1/ops/drifts.'
            : 'Wait for the next reconciliation: a suspected drift is raised or forgotten then.',
      },
    );
  }
  const difference = BigInt(drift.chain_amount) - BigInt(drift.ledger_amount);
  const booked = await postGroup(tx, clock, {
    settlementId: `adjust:${drift.id}`,
    accountId: drift.account_id,
    kind: 'chain.adjustment',
    entries: transfer(
      walletAccount(drift.chain_id, drift.wallet),
      externalAccount(drift.chain_id),
      drift.asset,
      difference,
    ),
    memo: { wallet: drift.wallet, drift: drift.id, block: String(drift.block), reason: params.reason },
  });
  if (!booked.ok) throw new Error(`the adjustment of ${drift.id} could not be booked: ${booked.reason}`);
  const now = clock.now();
  const resolved = await tx
    .updateTable('ledger_drifts')
    .set({
      resolved_at: now,
      resolution: 'adjusted',
      reason: params.reason,
      adjustment_group_id: booked.groupId,
      updated_at: now,
    })
    .where('id', '=', drift.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = driftView(resolved);
  await recordAudit(tx, clock, {
    accountId: drift.account_id,
    actor: params.actor,
    action: 'ledger.adjusted',
    subject: drift.id,
    details: {
      chain_id: drift.chain_id,
      wallet: drift.wallet,
      asset: drift.asset,
      amount: difference.toString(),
      group_id: booked.groupId,
      reason: params.reason,
    },
    network: params.network,
  });
  await emitEvent(tx, clock, {
    accountId: drift.account_id,
    kind: 'ledger.drift_resolved',
    subject: drift.id,
    payload: driftPayload(view, assetMetadata(params.registry, drift.asset).symbol),
  });
  return view;
}
