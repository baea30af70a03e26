import { Piscina } from "piscina";
import type { Config } from "@trendgate/config";
import { ApiError } from "../../http/api-error.ts";
import type { BacktestOutcome, BacktestTask } from "./task.ts";

// The gateway's backtest threads (./thread.ts): BACKTEST_THREADS of them, started at the first backtest and stopped
// after a minute without one, at a lower CPU priority than the event loop that serves requests (nice), so a costly
// replay takes longer rather than slowing other accounts' requests.

/** The thread's module: the bundle's (dist/gateway/, beside the gateway's own) or, under tsx and in tests, the source. */
function threadFile(): { filename: string; execArgv: string[] } {
  const source = import.meta.url.endsWith(".ts");
  return source
    ? { filename: new URL("./thread.ts", import.meta.url).href, execArgv: ["--import", "tsx"] }
    : { filename: new URL("../gateway/backtest-thread.mjs", import.meta.url).href, execArgv: [] };
}

const TASKS_PER_THREAD = 4;
const MAX_WAITING = 16;

export class BacktestPool {
  private pool: Piscina<BacktestTask, BacktestOutcome> | null = null;

  constructor(private readonly config: Config) {}

  run(task: BacktestTask): Promise<BacktestOutcome> {
    this.pool ??= new Piscina({
      ...threadFile(),
      workerData: { config: this.config },
      minThreads: 0,
      maxThreads: this.config.BACKTEST_THREADS,
      // A thread's replays mostly wait on the database, so several share one: an account at its limit of two leaves
      // room for another account's.
      concurrentTasksPerWorker: TASKS_PER_THREAD,
      // Beyond this many waiting, a backtest is refused (503) rather than left to wait past its client's patience.
      maxQueue: MAX_WAITING,
      idleTimeout: 60_000,
      niceIncrement: 10,
      // Between tasks a thread keeps its database pool's sockets and timers open: no Atomics.wait parking.
      atomics: "disabled",
    });
    return this.pool.run(task).catch((err: unknown) => {
      if (err instanceof Error && /queue is at limit/i.test(err.message)) {
        throw new ApiError("service_unavailable", `${MAX_WAITING} backtests are already waiting for this gateway's backtest threads; retry shortly`, { headers: { "Retry-After": "2" } });
      }
      throw err;
    });
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }
}
