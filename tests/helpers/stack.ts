import crypto from "node:crypto";
import { createLogger } from "@trendgate/logger";
import type { TrendEvent } from "@trendgate/contracts";
import { publishTrendEvent } from "../../packages/trends/src/events/publish.ts";
import { startWorkers, type RunningWorkers } from "../../apps/worker/src/run-workers.ts";
import { startGateway, type TestGateway } from "./gateway.ts";

/** Test settings for deliveries: short retries, local receivers allowed, fast sweeps. */
export const DELIVERY_ENV = {
  OUTBOUND_ALLOWLIST: "127.0.0.1",
  WEBHOOK_RETRY_SCHEDULE_SECONDS: "1,1,1",
  WEBHOOK_RETRY_JITTER: "0",
  WEBHOOK_SUBSCRIPTION_CACHE_MS: "0",
  TREND_ROUTING_CACHE_MS: "0",
  SWEEP_INTERVAL_MS: "300",
  SWEEP_GRACE_SECONDS: "1",
};

/** A gateway and in-process workers sharing one queue prefix: the whole delivery path, minus process boundaries.
 *  WORKER_QUEUES in env picks the queues the workers drain, as in the worker app. */
export async function startStack(env: Record<string, string> = {}, workerCount = 1) {
  const gw = await startGateway({ ...DELIVERY_ENV, ...env });
  const workers: RunningWorkers[] = [];
  for (let i = 0; i < workerCount; i++) workers.push(startWorkers(gw.deps.config, createLogger({ level: "silent" }), gw.deps.config.WORKER_QUEUES));
  return {
    gw,
    workers,
    publish: (e: TrendEvent) => publishTrendEvent(gw.deps, e),
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await gw.close();
    },
  };
}
export type Stack = Awaited<ReturnType<typeof startStack>>;

export function trendEvent(accountId: string, over: Partial<TrendEvent> = {}): TrendEvent {
  return {
    id: `evt_${crypto.randomUUID()}`,
    account_id: accountId,
    type: "trend.velocity_changed",
    trend_id: "trend_ai_agents",
    trend_name: "AI agents",
    category: "tech/ai",
    severity: "high",
    previous_severity: "medium",
    velocity: 120,
    previous_velocity: 40,
    anomaly_score: 12.5,
    timestamp: "2026-11-22T06:00:00.000Z",
    summary: "Mentions of AI agents are 3x their usual rate.",
    source_link: "https://trendgate.dev/briefings/trend_ai_agents",
    recommended_next_steps: ["Push to the content workflow", "Raise the AI category bid"],
    ...over,
  };
}

export const webhookBody = (url: string, over: Record<string, unknown> = {}) => ({
  url, trigger_type: "trend_velocity", delivery_mode: "instant_stream", threshold_value: 100, cooldown_seconds: 0, ...over,
});
