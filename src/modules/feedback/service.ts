// The public feature-request list. Requests are created by POST /v1/feedback (a later issue);
// what is published of them is the title and the status, never the body or the requester.

import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { notFound } from '../../core/errors/app-error.ts';
import { recordAudit, type NetworkContext } from '../audit/index.ts';
import { listPublicFeatureRequests, updateFeatureRequestStatus, type FeatureRequestStatus } from './store.ts';

export const FEEDBACK_LIST_DEFAULT_LIMIT = 100;
export const FEEDBACK_LIST_MAX_LIMIT = 200;

export interface PublicFeatureRequest {
  id: string;
  title: string;
  status: FeatureRequestStatus;
  createdAt: Date;
}

/** The newest `limit` requests of every account and status, newest first. */
export async function listFeatureRequests(db: DbExecutor, limit: number): Promise<PublicFeatureRequest[]> {
  const rows = await listPublicFeatureRequests(db, Math.min(Math.max(1, limit), FEEDBACK_LIST_MAX_LIMIT));
  return rows.map((r) => ({ id: r.id, title: r.title, status: r.status, createdAt: r.created_at }));
}

export interface FeatureRequestStatusChange {
  id: string;
  title: string;
  status: FeatureRequestStatus;
  previousStatus: FeatureRequestStatus;
  updatedAt: Date;
}

/**
 * Operator: changes a request's status (open, planned, shipped, declined) in the caller's
 * transaction, with an audit fact by `operator` on the requester's account. 404 when unknown.
 */
export async function setFeatureRequestStatus(
  tx: DbExecutor,
  clock: Clock,
  id: string,
  status: FeatureRequestStatus,
  network: NetworkContext | null,
): Promise<FeatureRequestStatusChange> {
  const row = await updateFeatureRequestStatus(tx, id, status, clock.now());
  if (!row) throw notFound(`No feature request ${id}.`);
  await recordAudit(tx, clock, {
    accountId: row.account_id,
    actor: 'operator',
    action: 'ops.feature_request_status',
    subject: row.id,
    details: { from: row.previous, to: row.status },
    network,
  });
  return {
    id: row.id,
    title: row.title,
    status: row.status,
    previousStatus: row.previous,
    updatedAt: row.updated_at,
  };
}
