// The account's events feed (GET /v1/events), read newest first a few pages deep and kept to the
// kinds a view asks for: the feed has no filter by kind, so the console filters what it read.

import { ok, type Session } from './api.ts';

export interface FeedEvent {
  id: string;
  kind: string;
  subject: string | null;
  created_at: string;
  data: Record<string, unknown>;
}

export const EVENT_PAGE = 200;

/** The latest events (at most `pages` pages of 200) whose kind `wanted` accepts, newest first. */
export async function recentEvents(
  session: Session,
  wanted: (kind: string) => boolean,
  pages = 3,
): Promise<{ events: FeedEvent[]; complete: boolean }> {
  const events: FeedEvent[] = [];
  let cursor: number | null = null;
  for (let page = 0; page < pages; page++) {
    const query: { limit: number; cursor?: number } = { limit: EVENT_PAGE };
    if (cursor !== null) query.cursor = cursor;
    const answer = await ok(session.client.api.GET('/v1/events', { params: { query } }));
    events.push(...answer.events.filter((e) => wanted(e.kind)));
    cursor = answer.next_cursor;
    if (cursor === null) return { events, complete: true };
  }
  return { events, complete: false };
}

/** A field of an event's data as text, `—` when it is absent. */
export function field(event: FeedEvent, name: string): string {
  const value = event.data[name];
  if (value === null || value === undefined) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
