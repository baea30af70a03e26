/**
 * Collects items from concurrent jobs and writes them in one transaction (at most `maxItems`, or after `maxWaitMs`).
 * Each add() resolves only once its batch has committed, so a job completes only after its record is durable; if
 * the batch fails, every job in it fails and is retried. A one-row commit costs Postgres ~20x a row inside a
 * multi-row write, so this is the largest single win for delivery throughput. Batches are independent and may
 * commit concurrently (each is a set of different rows).
 */
export class BatchWriter<T> {
  private items: T[] = [];
  private waiters: { resolve(): void; reject(e: unknown): void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly write: (items: T[]) => Promise<void>, private readonly opts: { maxItems: number; maxWaitMs: number }) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.items.push(item);
      this.waiters.push({ resolve, reject });
      if (this.items.length >= this.opts.maxItems) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.maxWaitMs);
    });
  }

  /** Writes what is buffered now; resolves when every batch started so far has finished. */
  flush(): Promise<void> {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    if (this.items.length) {
      const items = this.items, waiters = this.waiters;
      this.items = [];
      this.waiters = [];
      const p: Promise<void> = this.write(items).then(() => waiters.forEach((w) => w.resolve()), (e) => waiters.forEach((w) => w.reject(e)));
      this.inFlight.add(p);
      p.finally(() => this.inFlight.delete(p));
    }
    return Promise.all(this.inFlight).then(() => undefined);
  }
}
