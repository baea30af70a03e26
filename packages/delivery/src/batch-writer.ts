export interface BatchWriterOptions {
  /** Items per batch at most. */
  maxItems: number;
  /** How long the first item of a batch waits for company before the batch is written anyway. */
  maxWaitMs: number;
  /** Batches being written at once by this writer, at most (default 4): the rest wait, and grow, meanwhile. */
  maxConcurrent?: number;
  /** Whether a failed write may succeed if tried again (a dropped connection, a deadlock, a failover). */
  isTransient?: (err: unknown) => boolean;
  /** Delays before each new try of a batch that failed transiently (ms); its length is the number of re-tries. */
  retryDelaysMs?: number[];
}

/** Re-tries of a database write that failed transiently (ms, +-25 %): about 6 s in all, well inside a job's lock. */
export const TRANSIENT_RETRY_DELAYS_MS = [25, 50, 100, 200, 400, 800, 1600, 3200];

interface Pending<T, R> { item: T; resolve(r: R): void; reject(e: unknown): void }

/**
 * Collects items from concurrent jobs and writes them together (at most `maxItems`, or after `maxWaitMs`). Each
 * add() resolves only once its item's batch has been written. A one-row commit costs Postgres ~20x a row inside a
 * multi-row write, so this is the largest single win for delivery throughput.
 *
 * Failures are handled here, not by failing the jobs: a job that fails after it has sent something is run again by
 * BullMQ, which sends it again. So a write that fails transiently (`isTransient`) is tried again after each of
 * `retryDelaysMs` (the write must be idempotent); a batch that fails for another reason is split in halves and each
 * half written on its own, so one bad item fails alone instead of taking its whole batch down. At most
 * `maxConcurrent` batches are written at once (they may commit in any order), so a burst never takes every
 * connection of the pool.
 *
 * `write` may answer one result per item, in order (e.g. what each row's update returned): add() resolves with it.
 */
export class BatchWriter<T, R = void> {
  private queue: Pending<T, R>[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxConcurrent: number;

  constructor(private readonly write: (items: T[]) => Promise<R[] | void>, private readonly opts: BatchWriterOptions) {
    this.maxConcurrent = Math.max(1, opts.maxConcurrent ?? 4);
  }

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.queue.length >= this.opts.maxItems) this.pump(false);
      else this.timer ??= setTimeout(() => { this.timer = null; this.pump(true); }, this.opts.maxWaitMs);
    });
  }

  /** Writes what is buffered now; resolves when every batch started so far has finished. */
  async flush(): Promise<void> {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    while (this.queue.length || this.inFlight.size) {
      this.pump(true);
      if (this.inFlight.size) await Promise.race(this.inFlight);
    }
  }

  /** Starts batches while there are free slots: full ones always, a partial one when `partial` (its wait is over). */
  private pump(partial: boolean) {
    while (this.queue.length && this.inFlight.size < this.maxConcurrent && (partial || this.queue.length >= this.opts.maxItems)) {
      const batch = this.queue.splice(0, this.opts.maxItems);
      const p: Promise<void> = this.writeBatch(batch).finally(() => {
        this.inFlight.delete(p);
        if (this.queue.length) this.pump(true); // those waited for a slot: their time is up
      });
      this.inFlight.add(p);
    }
    if (this.queue.length && !this.timer && this.inFlight.size < this.maxConcurrent)
      this.timer = setTimeout(() => { this.timer = null; this.pump(true); }, this.opts.maxWaitMs);
  }

  /** Writes one batch and settles its items; never rejects. */
  private async writeBatch(batch: Pending<T, R>[]): Promise<void> {
    const delays = this.opts.retryDelaysMs ?? [];
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await this.write(batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve((out ? out[i] : undefined) as R));
        return;
      } catch (err) {
        const transient = this.opts.isTransient?.(err) ?? false;
        if (transient && attempt < delays.length) {
          await new Promise((r) => setTimeout(r, delays[attempt] * (0.75 + Math.random() / 2)));
          continue;
        }
        if (!transient && batch.length > 1) { // isolate the item that cannot be written
          const half = Math.ceil(batch.length / 2);
          await this.writeBatch(batch.slice(0, half));
          await this.writeBatch(batch.slice(half));
          return;
        }
        for (const p of batch) p.reject(err);
        return;
      }
    }
  }
}
