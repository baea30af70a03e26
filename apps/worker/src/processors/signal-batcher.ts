import type { Signal } from "@trendgate/contracts";
import { insertSignalBatches, isSignalDataError, storeSignals, type Db, type StoreSignalsResult } from "@trendgate/db";

export interface SignalBatcherOptions {
  /** Signals per merged statement, at most (a single job's batch may exceed it: it is never split). */
  maxSignals: number;
  /** Merged statements running at once: while they run, the jobs that arrive wait and are merged into the next. */
  maxInFlight: number;
  bucketSeconds: number;
}

type Item = { index: number; signal: Signal };
interface Pending { accountId: string; items: Item[]; resolve(r: StoreSignalsResult): void; reject(err: unknown): void }

/**
 * Group commit for signal batches: the batches of the jobs a worker runs at once are stored in one statement
 * (insertSignalBatches), and each job's promise settles once its rows are committed. Nothing waits on a timer: a
 * batch goes out on the next turn of the event loop when a statement slot is free, and under load the jobs that
 * arrive while the statements run make up the next one. Exactly-once holds as before (signals are unique per
 * account/source/id; only new ones reach the buckets). A failed merged statement stores nothing (one statement):
 * on a data error or a deleted account each job's batch is stored alone by the tolerant path (storeSignals, whose
 * bisection isolates poison items), so one job's bad value never fails the others; on any other error (connection,
 * deadlock) every job of the statement fails and BullMQ retries it.
 */
export class SignalBatcher {
  private pending: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly db: Db, private readonly opts: SignalBatcherOptions) {}

  /** Stores one job's (validated, de-duplicated) items; settles when they are committed. */
  store(accountId: string, items: Item[]): Promise<StoreSignalsResult> {
    if (!items.length) return Promise.resolve({ inserted: 0, rejections: [], statements: 0 });
    return new Promise((resolve, reject) => {
      this.pending.push({ accountId, items, resolve, reject });
      this.kick();
    });
  }

  private kick() {
    if (this.scheduled || this.inFlight >= this.opts.maxInFlight || !this.pending.length) return;
    this.scheduled = true;
    // setImmediate: the jobs BullMQ hands over in the same turn (a fetch returning several) join this statement.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.opts.maxInFlight && this.pending.length) {
        const group: Pending[] = [];
        let n = 0;
        while (this.pending.length && (!group.length || n + this.pending[0].items.length <= this.opts.maxSignals)) {
          const p = this.pending.shift()!;
          group.push(p);
          n += p.items.length;
        }
        this.inFlight++;
        void this.run(group).finally(() => { this.inFlight--; this.kick(); });
      }
    });
  }

  private async run(group: Pending[]) {
    try {
      const counts = await insertSignalBatches(this.db, group.map((p) => ({ accountId: p.accountId, signals: p.items.map((i) => i.signal) })), this.opts.bucketSeconds);
      group.forEach((p, i) => p.resolve({ inserted: counts[i], rejections: [], statements: 1 }));
    } catch (err) {
      // The statement rolled back as a whole: nothing of it is stored. A transient error (connection, deadlock)
      // fails every job of the group, and BullMQ retries each. An error about one batch's data, or about one
      // account (23503: deleted), is found by storing each batch alone, so the other jobs are not held up.
      const perBatch = isSignalDataError(err) || (group.length > 1 && (err as { code?: unknown })?.code === "23503");
      if (!perBatch) {
        for (const p of group) p.reject(err);
        return;
      }
      for (const p of group) {
        try { p.resolve(await storeSignals(this.db, p.accountId, p.items, this.opts.bucketSeconds)); } catch (e) { p.reject(e); }
      }
    }
  }
}
