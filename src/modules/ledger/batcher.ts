// Group commit for bookings that stand alone (a fee paid from the prepaid balance with nothing
// else in its transaction): concurrent bookings wait while the previous batch is in the database,
// then go together as ONE statement that commits alone (postGroups). Each booking keeps its own
// outcome; a lone booking goes at once, so a quiet service adds no latency. When a batch's
// statement fails as a whole (a deadlock, a refused row), each of its bookings is retried alone,
// so one bad booking fails only its own caller. docs/ledger.md, "Batched bookings".

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
  resolve(result: PostGroupResult): void;
  reject(err: unknown): void;
}

export interface BatcherStats {
  batches: number;
  bookings: number;
  /** Batches whose statement failed, so each booking was retried alone. */
  fallbacks: number;
  largest: number;
}

export class GroupBatcher {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;
  readonly stats: BatcherStats = { batches: 0, bookings: 0, fallbacks: 0, largest: 0 };

  constructor(
    private readonly db: Db,
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
      this.waiting.push({ params, at: clock.now(), ...(guard ? { guard } : {}), resolve, reject });
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
    // Row locks in one order across concurrent batches (the prepaid balance rows are per account).
    const ordered = [...batch].sort((a, b) => compareAccounts(a.params.accountId, b.params.accountId));
    try {
      const results = await postGroups(this.db, ordered);
      ordered.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      if (ordered.length === 1) {
        ordered[0]!.reject(err);
        return;
      }
      this.stats.fallbacks += 1;
      for (const w of ordered) {
        try {
          const [result] = await postGroups(this.db, [w]);
          w.resolve(result!);
        } catch (alone) {
          w.reject(alone);
        }
      }
    }
  }
}

function compareAccounts(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

const batchers = new WeakMap<Db, GroupBatcher>();

/** The process's batcher for `db` (one per database handle, so every route shares it). */
export function groupBatcher(db: Db): GroupBatcher {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new GroupBatcher(db);
    batchers.set(db, batcher);
  }
  return batcher;
}
