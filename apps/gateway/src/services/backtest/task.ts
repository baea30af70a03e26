import type { BacktestRules } from "@trendgate/webhooks";
import type { ChatBacktest, WebhookBacktest } from "@trendgate/contracts";
import type { PreviewRoute } from "@trendgate/operator";
import type { ChatBacktestSettings } from "./replay.ts";

/** What the gateway hands a backtest thread (structured-cloned: plain data only). */
export type BacktestTask =
  | { kind: "webhook"; accountId: string; rules: BacktestRules; days: number; now: number }
  | { kind: "chat"; accountId: string; settings: ChatBacktestSettings; routes: PreviewRoute[]; days: number; now: number };

export type BacktestOutcome =
  | { ok: true; result: WebhookBacktest | ChatBacktest }
  | { ok: false; databaseUnavailable: boolean; message: string };
