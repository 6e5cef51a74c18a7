// What a route handler answers, and the SQL form of an Idempotency-Key that a one-statement write
// carries: the types the route table and the idempotency layer share. Imports nothing of the
// HTTP core, so both can import it.

import type { RawBuilder } from 'kysely';
import type { Readable } from 'node:stream';

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Send this text or stream with `contentType` instead of the JSON of `body` (docs pages, downloads). */
  raw?: { text: string | Readable; contentType: string };
  /** The body stored for Idempotency-Key replays when it must differ (tokens nulled). */
  replayBody?: unknown;
}

/**
 * An Idempotency-Key as SQL calls, for a write that carries its key in its own statement (see
 * runIdempotentAlone in idempotency.ts) and for the transactional claim.
 */
export interface StatementKey {
  /**
   * Before the write: claims the key, or raises so that nothing of the statement is written.
   * `wait`: wait a short while for a first request still in flight (a statement of its own);
   * without it a held key fails at once (a statement other writes share must not stall).
   */
  claim(wait: boolean): RawBuilder<unknown>;
  /** After the write: stores `result` for replay, or gives the key back when it is not storable. */
  answer(result: RouteResult): RawBuilder<unknown>;
  /** When the write was refused: gives the key back. */
  release: RawBuilder<unknown>;
}
