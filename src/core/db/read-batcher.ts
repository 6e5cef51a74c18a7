// Coalesced reads: concurrent callers asking the same kind of question (one row per key) wait
// while the previous batch is in the database, then go together as ONE statement. A lone read
// goes at once, so a quiet service adds no latency; under load, N reads cost one statement's
// overhead instead of N. Each caller still waits for exactly one statement: one round trip.

export interface ReadBatcherOptions {
  /** Most keys in one statement. */
  maxBatch: number;
  /** Statements in the database at once. */
  maxInFlight: number;
}

interface Waiting<K, V> {
  key: K;
  resolve(value: V): void;
  reject(err: unknown): void;
}

export class ReadBatcher<K, V> {
  private readonly waiting: Waiting<K, V>[] = [];
  private inFlight = 0;

  /**
   * `readMany` answers every key of a batch, in order (one value per key). When it fails, every
   * caller of that batch gets its error.
   */
  constructor(
    private readonly readMany: (keys: K[]) => Promise<V[]>,
    private readonly options: ReadBatcherOptions = { maxBatch: 64, maxInFlight: 2 },
  ) {}

  read(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
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

  private async run(batch: Waiting<K, V>[]): Promise<void> {
    try {
      const values = await this.readMany(batch.map((w) => w.key));
      if (values.length !== batch.length) {
        throw new Error(`a batched read answered ${values.length} values for ${batch.length} keys`);
      }
      batch.forEach((w, i) => w.resolve(values[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
