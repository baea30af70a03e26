import crypto from "node:crypto";
import type { BacktestRules } from "@trendgate/webhooks";
import type { ChatBacktest, WebhookBacktest } from "@trendgate/contracts";
import { operatorRoutesOf } from "@trendgate/db";
import { releaseLock, tryLock } from "@trendgate/queues";
import { ApiError } from "../../http/api-error.ts";
import { databaseUnavailable } from "../../http/problem.ts";
import type { GatewayDeps } from "../../deps.ts";
import type { ChatBacktestSettings } from "./replay.ts";
import type { BacktestTask } from "./task.ts";

// Backtests: what a subscription (./replay.ts) or chat settings would have received over the account's stored
// history. One account's backtests share the gateway with every other account's requests, so they are bounded: an
// account runs at most BACKTEST_CONCURRENCY_PER_ACCOUNT at once across the fleet (429 beyond), each on a backtest
// thread (./pool.ts) within BACKTEST_MAX_EVENTS events and BACKTEST_MAX_SECONDS.

/** How long a slot outlives the time budget: the page that ends past it, and the answer. */
const SLOT_MARGIN_MS = 30_000;

type BacktestDeps = Pick<GatewayDeps, "readDb" | "redis" | "config" | "backtests">;

/**
 * Runs `task` in one of the account's BACKTEST_CONCURRENCY_PER_ACCOUNT slots: leases in Redis (tryLock), so the limit
 * holds across every gateway, each lapsing on its own if its gateway dies mid-backtest. None free: 429.
 */
async function inSlot(deps: BacktestDeps, task: BacktestTask) {
  const { redis, config } = deps;
  const slots = config.BACKTEST_CONCURRENCY_PER_ACCOUNT;
  const owner = crypto.randomUUID();
  let key: string | null = null;
  for (let i = 0; i < slots && !key; i++) {
    const k = `${config.QUEUE_PREFIX}:backtest:${task.accountId}:${i}`;
    if (await tryLock(redis, k, owner, config.BACKTEST_MAX_SECONDS * 1000 + SLOT_MARGIN_MS)) key = k;
  }
  if (!key) {
    throw new ApiError("too_many_backtests", `This account already has ${slots} backtest(s) running, the most it may at once; retry when one has finished`, {
      headers: { "Retry-After": "1" },
    });
  }
  try {
    const outcome = await deps.backtests.run(task);
    if (outcome.ok) return outcome.result;
    if (outcome.databaseUnavailable) throw databaseUnavailable();
    throw new Error(`backtest failed: ${outcome.message}`);
  } finally {
    await releaseLock(redis, key, owner).catch(() => {}); // unreleased, it lapses
  }
}

export async function backtestWebhook(deps: BacktestDeps, accountId: string, rules: BacktestRules, days: number, now = new Date()): Promise<WebhookBacktest> {
  return await inSlot(deps, { kind: "webhook", accountId, rules, days, now: now.getTime() }) as WebhookBacktest;
}

export async function backtestChat(deps: BacktestDeps, accountId: string, settings: ChatBacktestSettings, days: number, now = new Date()): Promise<ChatBacktest> {
  // Only what the replay reads crosses to the thread: the settings, and the stored routing rules' ids and matches.
  const { minSeverity, categories, recoveryWindowMinutes, triggerWindowMinutes } = settings;
  const routes = ((await operatorRoutesOf(deps.readDb, [accountId])).get(accountId)?.routes ?? []).map(({ id, match }) => ({ id, match }));
  return await inSlot(deps, { kind: "chat", accountId, settings: { minSeverity, categories, recoveryWindowMinutes, triggerWindowMinutes }, routes, days, now: now.getTime() }) as ChatBacktest;
}
