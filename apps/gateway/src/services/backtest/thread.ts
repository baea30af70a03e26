import { workerData } from "node:worker_threads";
import type { Config } from "@trendgate/config";
import { createDb, isDbUnavailable } from "@trendgate/db";
import { replayChat, replayWebhook } from "./replay.ts";
import type { BacktestOutcome, BacktestTask } from "./task.ts";

// A backtest thread (./pool.ts starts it): replays run here so that parsing a page of history and re-running the
// detector never hold up the event loop serving every account's requests. It has its own small database pool.

const { config } = workerData as { config: Config };
// Four replays at a time (./pool.ts), each with up to 4 reads in flight (the next page, 3 detector chunks ahead); more
// wait for a connection rather than adding database load. A backtest reads only history: the read replica, if any.
const db = createDb(config.DATABASE_READ_URL ?? config.DATABASE_URL, { poolSize: 8, connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS });
const deps = { db, config };

/** One task; a failure comes back as data, as an Error crossing threads keeps its message only. */
export default async function run(task: BacktestTask): Promise<BacktestOutcome> {
  try {
    const now = new Date(task.now);
    const result = task.kind === "webhook"
      ? await replayWebhook(deps, task.accountId, task.rules, task.days, now)
      : await replayChat(deps, task.accountId, task.settings, task.routes, task.days, now);
    return { ok: true, result };
  } catch (err) {
    return { ok: false, databaseUnavailable: isDbUnavailable(err), message: err instanceof Error ? err.message : String(err) };
  }
}
