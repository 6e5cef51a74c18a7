// The public feature-request list. Requests are created by POST /v1/feedback (a later issue);
// what is published of them is the title and the status, never the body or the requester.

import type { DbExecutor } from '../../core/db/database.ts';
import { listPublicFeatureRequests, type FeatureRequestStatus } from './store.ts';

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
