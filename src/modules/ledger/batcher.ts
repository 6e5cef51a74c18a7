// Group commit for bookings that stand alone (a fee paid from the prepaid balance with nothing
// else in its transaction): concurrent bookings wait while the previous batch is in the database,
// then go together as ONE statement that commits alone (postGroups). Each booking keeps its own
// outcome; a lone booking goes at once, so a quiet service adds no latency. When a batch's
// statement fails as a whole (a deadlock, a refused row, a held Idempotency-Key), each of its
// bookings is retried alone, so one bad booking fails only its own caller; a booking that loses
// a deadlock alone is tried again. docs/ledger.md, "Batched bookings".

import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../core/db/database.ts';
import {
  groupProblems,
  LedgerError,
  postGroups,
  type BatchedGroup,
  type BookingGuard,
  type PostGroupParameters,
  type PostGroupResult,
} from './ledger.ts';

export interface GroupBatcherOptions {
  /** Most bookings in one statement (each group's `then` calls count against PostgreSQL's 65,535 parameters). */
  maxBatch: number;
  /** Batches in the database at once. With more than one, each batch is sorted by account. */
  maxInFlight: number;
}

export const DEFAULT_BATCHER_OPTIONS: GroupBatcherOptions = { maxBatch: 64, maxInFlight: 2 };

interface Waiting extends BatchedGroup {
  /** performance.now() when it was handed to the batcher: how long it waited for its statement. */
  queuedAt: number;
  resolve(result: PostGroupResult): void;
  reject(err: unknown): void;
}

/** What the batcher reports as it works (the metrics): each statement it sends, each fallback. */
export interface BatchObserver {
  /** A statement went out with `bookings` bookings, which had waited `waitedSeconds` each. */
  statement(bookings: number, waitedSeconds: number[]): void;
  /** A batch's statement failed as a whole: its bookings are retried one by one. */
  fallback(): void;
}

export interface BatcherStats {
  batches: number;
  bookings: number;
  /** Batches whose statement failed, so each booking was retried alone. */
  fallbacks: number;
  /** Bookings whose guard had to wait for a lock, posted alone outside the batches. */
  waited: number;
  largest: number;
}

export class GroupBatcher {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;
  readonly stats: BatcherStats = { batches: 0, bookings: 0, fallbacks: 0, waited: 0, largest: 0 };
  observer: BatchObserver | null = null;

  constructor(
    readonly db: Db,
    private readonly options: GroupBatcherOptions = DEFAULT_BATCHER_OPTIONS,
  ) {}

  /**
   * Books `params` in its own commit, possibly batched with concurrent bookings, with `guard`'s
   * calls around it when given. Never call it inside a transaction (on the embedded database that
   * would wait for itself): the booking is not part of the caller's transaction.
   */
  post(clock: Clock, params: PostGroupParameters, guard?: BookingGuard): Promise<PostGroupResult> {
    const problems = groupProblems(params);
    if (problems.length > 0)
      return Promise.reject(new LedgerError(`ledger group refused: ${problems.join('; ')}`));
    return new Promise<PostGroupResult>((resolve, reject) => {
      this.waiting.push({
        params,
        at: clock.now(),
        queuedAt: performance.now(),
        ...(guard ? { guard } : {}),
        resolve,
        reject,
      });
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        this.next();
      });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    this.stats.batches += 1;
    this.stats.bookings += batch.length;
    this.stats.largest = Math.max(this.stats.largest, batch.length);
    const started = performance.now();
    this.observer?.statement(
      batch.length,
      batch.map((w) => (started - w.queuedAt) / 1000),
    );
    // Row locks in one order across concurrent batches (the prepaid balance rows are per account).
    const ordered = [...batch].sort((a, b) => compareAccounts(a.params.accountId, b.params.accountId));
    if (ordered.length === 1) {
      await this.postAlone(ordered[0]!);
      return;
    }
    try {
      const results = await postGroups(this.db, ordered);
      ordered.forEach((w, i) => w.resolve(results[i]!));
      return;
    } catch {
      this.stats.fallbacks += 1;
      this.observer?.fallback();
    }
    // Each booking alone, side by side, as if each had come on its own: a booking that waits (for
    // an Idempotency-Key held by a request in flight, say) holds up no other.
    await Promise.all(ordered.map((w) => this.postAlone(w)));
  }

  /** One booking in a statement of its own; a deadlock victim is tried again (ALONE_ATTEMPTS in all). */
  private async postAlone(w: Waiting): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const [result] = await postGroups(this.db, [w]);
        w.resolve(result!);
        return;
      } catch (err) {
        if (attempt < ALONE_ATTEMPTS && retryable(err)) continue;
        if (w.guard && lockNotAvailable(err)) {
          // Its guard needs a lock another transaction holds: wait for it outside the batches.
          void this.postWaiting(w);
          return;
        }
        w.reject(err);
        return;
      }
    }
  }

  /** One booking whose guard may wait for its lock (not counted against maxInFlight). */
  private async postWaiting(w: Waiting): Promise<void> {
    this.stats.waited += 1;
    try {
      const [result] = await postGroups(this.db, [w], true);
      w.resolve(result!);
    } catch (err) {
      w.reject(err);
    }
  }
}

const ALONE_ATTEMPTS = 3;

function lockNotAvailable(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '55P03';
}

/** Failures that say nothing about the booking itself: trying it again may well succeed. */
function retryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001'; // deadlock_detected, serialization_failure
}

function compareAccounts(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

const batchers = new WeakMap<Db, GroupBatcher>();

/** Reports what `db`'s batcher does to `observer` from now on (the metrics do this once). */
export function observeBatches(db: Db, observer: BatchObserver): void {
  groupBatcher(db).observer = observer;
}

/** The process's batcher for `db` (one per database handle, so every route shares it). */
export function groupBatcher(db: Db): GroupBatcher {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new GroupBatcher(db);
    batchers.set(db, batcher);
  }
  return batcher;
}
