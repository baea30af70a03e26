import { ProviderError } from "@trendgate/delivery";

// The one loop that waits for a provider's async report job (submitted by the connector, downloaded by it after):
// wait, ask, and wait longer each time (the first wait, then `stepMs` doubling up to `maxMs`) until the job is ready,
// failed (`failed`: never retried) or out of time (`timedOut`). A wait that would end past the budget is not
// started. A throttled or failed poll (rate_limited or unavailable) may be retried `retries` times in a row, after the
// wait the provider asked for. The caller's abort ends any wait at once with its reason; the job is left to the provider.

/** The job is ready (its result), still running (its status, for the time-out message), or failed for good. */
export type PollAnswer<T> = { ready: T } | { pending: string } | { failed: Error };

export interface PollSchedule {
  /** The wait before the first poll (0: poll at once). */
  firstMs: number;
  /** The wait after the first pending answer, doubled after each one; default twice firstMs. */
  stepMs?: number;
  maxMs: number;
  /** How long the whole wait may take, counted from the first wait. */
  budgetMs: number;
  /** Throttled or failed polls tolerated in a row. */
  retries?: number;
}

/** Waits `ms`, or rejects at once with the signal's reason when it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => { signal?.removeEventListener("abort", onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(signal!.reason); };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export async function pollReport<T>(
  check: () => Promise<PollAnswer<T>>,
  s: PollSchedule,
  timedOut: (elapsedMs: number, lastStatus: string) => Error,
  signal?: AbortSignal,
): Promise<T> {
  const start = Date.now();
  let step = Math.min(s.stepMs ?? s.firstMs * 2, s.maxMs);
  let wait = s.firstMs;
  let failures = 0;
  for (;;) {
    if (wait > 0) await sleep(wait, signal);
    let answer: PollAnswer<T>;
    try {
      answer = await check();
      failures = 0;
    } catch (err) {
      const transient = err instanceof ProviderError && (err.kind === "rate_limited" || err.kind === "unavailable");
      if (!transient || ++failures > (s.retries ?? 0)) throw err;
      wait = err.detail.retryAfterMs ?? step;
      if (Date.now() - start + wait > s.budgetMs) throw err;
      continue;
    }
    if ("ready" in answer) return answer.ready;
    if ("failed" in answer) throw answer.failed;
    if (Date.now() - start + step > s.budgetMs) throw timedOut(Date.now() - start, answer.pending);
    wait = step;
    step = Math.min(step * 2, s.maxMs);
  }
}
