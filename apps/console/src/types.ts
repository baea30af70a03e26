// The API's JSON shapes the console reads and sends, written out by hand from packages/contracts/src (the contracts
// module pulls in zod and Node types, which the browser bundle must not carry). Keep in step with those files.

export interface Page<T> { data: T[]; next_cursor: string | null }

// errors.ts
export interface FieldError { location: "body" | "query" | "path" | "header"; path: string; message: string; code: string }
export interface Problem {
  type: string; title: string; status: number; detail?: string; instance?: string; code: string; request_id: string;
  errors?: FieldError[];
}

// Console session exchange (POST /api/console/sessions/exchange)
export interface ConsoleSession { access_token: string; expires_at: string; account_id: string; session_id: string }

// status.ts (GET /status): the extra fields come with the admin token only
export interface StatusCheck { status: "up" | "down"; latency_ms?: number | null; error?: string }
export interface QueueDepth { waiting: number; active: number; delayed: number; failed: number }
export interface TableSize { bytes: number; rows_estimate: number }
export interface StatusResponse {
  status: "ok" | "unavailable"; version: string; checks: { postgres: StatusCheck; redis: StatusCheck };
  uptime_seconds?: number; queues?: Record<string, QueueDepth>; tables?: Record<string, TableSize>;
}

// trend-events.ts, trends.ts
export const SEVERITIES = ["low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];
export const STAGES = ["emerging", "rising", "peaking", "cooling", "dormant"] as const;
export type Stage = (typeof STAGES)[number];
export interface Trend {
  id: string; name: string; category: string; status: "active" | "ended"; severity: Severity; stage: Stage;
  velocity: number; acceleration: number; anomaly_score: number; current: number; baseline: number; peak_velocity: number;
  sentiment: number | null; detected_at: string; assessed_bucket: string; summary: string; recommended_next_steps: string[];
  /** Not in the Trend contract today; shown when a later version carries a briefing link. */
  briefing_url?: string | null; source_link?: string | null;
}

// webhooks.ts
export const TRIGGER_TYPES = {
  trend_detected: "Every newly detected trend whose velocity is at or above the threshold (0 = every new trend).",
  trend_velocity: "A trend's velocity crosses the threshold upwards.",
  severity_change: "A trend's severity rises to at least the threshold (1 low, 2 medium, 3 high, 4 critical).",
  trend_ended: "A trend ends with a severity of at least the threshold (0 = every trend that ends).",
  event_types: "Every event of the types listed below (the threshold is not used: 0).",
} as const;
export type TriggerType = keyof typeof TRIGGER_TYPES;
export const DELIVERY_MODES = {
  instant_stream: "Instant: firings within the cooldown of the last delivery are dropped",
  cooldown_digest: "Digest: the strongest firing inside the cooldown is delivered when it ends",
} as const;
export type DeliveryMode = keyof typeof DELIVERY_MODES;
export const WEBHOOK_EVENT_TYPES = [
  "trend.detected", "trend.severity_changed", "trend.velocity_changed", "trend.ended",
  "webhook.disabled", "webhook.delivery_failed", "connection.needs_reauth", "connection.connected",
  "connector.needs_reauth", "connector.recovered", "connector.delivery_failing", "report.export_ready",
] as const;
export const OPERATIONAL_EVENT_TYPES = WEBHOOK_EVENT_TYPES.slice(4);
export type WebhookStatus = "active" | "paused" | "disabled";
export interface Webhook {
  id: string; url: string; trigger_type: TriggerType; delivery_mode: DeliveryMode; threshold_value: number; cooldown_seconds: number;
  category: string | null; description: string | null; event_types: string[]; filter: unknown; header_names: string[];
  body_template: { format: string; template?: string } | null; status: WebhookStatus; disabled_reason: string | null;
  failing_since: string | null; secret_rotating_until: string | null; created_at: string; updated_at: string;
}
export interface WebhookWithSecret extends Webhook { secret: string }
export interface CreateWebhookBody {
  url: string; trigger_type: TriggerType; delivery_mode: DeliveryMode; threshold_value: number; cooldown_seconds: number;
  category?: string | null; description?: string | null; event_types?: string[];
}
export type UpdateWebhookBody = Partial<CreateWebhookBody>;
export interface RotatedSecret { secret: string; previous_secret_expires_at: string | null }
export interface QueuedDelivery { delivery_id: string; webhook_id: string; status: "queued" }
export interface RecoverResult { recovered: number }
export const EXECUTION_OUTCOMES = ["succeeded", "retrying", "failed", "suppressed"] as const;
export type ExecutionOutcome = (typeof EXECUTION_OUTCOMES)[number];
export interface WebhookExecution {
  id: string; webhook_id: string; delivery_id: string; attempt: number;
  trigger: "trend_event" | "account_event" | "test" | "replay" | "recovery";
  outcome: ExecutionOutcome;
  request: { url: string; headers: Record<string, string>; body_bytes: number };
  response_status: number | null; response_body: string | null; response_body_truncated: boolean; duration_ms: number;
  error_class: string | null; error_message: string | null; next_retry_at: string | null; created_at: string;
}
export interface AccountEvent { id: string; type: string; data: Record<string, unknown>; created_at: string }

// connections.ts, connectors.ts
export type ConnectionState = "connected" | "needs_reauth" | "error";
export interface ConnectionStatus {
  provider: string; kind: string; status: ConnectionState; account: Record<string, string | null>; scopes: string[];
  token_expires_at: string | null; last_error: string | null; last_error_at: string | null; connected_at: string; updated_at: string;
}
export interface AuthorizationStart { authorization_url: string; state: string; expires_at: string }
export interface Disconnected { provider: string; revocation: "revoked" | "not_supported" | "failed"; revocation_error: string | null }
export interface SocialProvider {
  id: string; display_name: string; kind: "social"; polled: boolean; connection_path: string;
  actions: { name: string; path: string; summary: string; approval: boolean }[];
}
export interface SocialConnectionStatus {
  connection_id: string; provider: string; status: "active" | "needs_reauth" | "rate_limited" | "quota_exhausted" | "error";
  last_error: string | null; terms: string[]; last_polled_at: string | null; next_poll_at: string | null;
  quota: Record<string, unknown>; recent_observations: { hours: number; count: number }; actions: unknown[];
}

// operator.ts
export const OPERATOR_STATES = ["open", "acknowledged", "snoozed", "resolved"] as const;
export type OperatorState = (typeof OPERATOR_STATES)[number];
export type OperatorAction = "acknowledge" | "resolve" | "snooze" | "reopen";
export const SNOOZE_MINUTES = { min: 5, max: 10_080, default: 60 } as const;
export interface OperatorItem {
  id: string; state: OperatorState; severity: Severity; title: string; category: string; summary: string; velocity: number;
  briefing_url: string | null; trend_id: string | null; occurrences: number; version: number; snoozed_until: string | null;
  acknowledged_by: string | null; acknowledged_at: string | null; resolved_by: string | null; resolved_at: string | null;
  chat: { channel_id: string | null; message_ts: string | null; delivery_error: string | null };
  created_at: string; updated_at: string;
}
export interface OperatorItemEvent {
  id: string; action: string; from_state: string | null; to_state: string; actor: string; version: number;
  data: Record<string, unknown>; created_at: string;
}
export interface OperatorItemWithHistory extends OperatorItem { history: OperatorItemEvent[] }
export interface OperatorActionBody { action: OperatorAction; version: number; snooze_minutes?: number; note?: string }

// ads.ts (and packages/ads/src/plan.ts for the diff and refusal rows, typed `unknown` in the contract)
export interface AdsProvider {
  id: string; display_name: string; connected: boolean; configured: boolean;
  capabilities: { dry_run: boolean; audience_estimate: boolean; sandbox: boolean; targeting: string[] };
  base_path: string;
}
export interface AdsSelection {
  trend_category: string; strict_safety: boolean; account_id?: string;
  safety?: { min_severity?: Severity; max_changes_per_entity?: number; max_changes_per_run?: number; blocklist?: string[] };
}
export interface AdsDiffRow {
  entity_id: string; entity_name: string | null; field: string; before: string[]; after: string[];
  changes: { change_id: string; op: "add" | "remove"; item: string; trend: { id: string; name: string } | null }[];
}
export interface AdsRefusedChange { change_id: string; entity_id: string; field: string; item: string; trend_id: string | null; rule: string; reason: string }
export interface AdsDryRun {
  ran: boolean; passed: boolean | null; by: "provider" | "connector";
  results: { change_id: string; ok: boolean; error: string | null; request_id: string | null; note?: string }[];
}
export interface AdsPlan {
  id: string; provider: string; status: string; ad_account_id: string; category: string; strict_safety: boolean;
  changes: unknown[]; diff: AdsDiffRow[]; refused: AdsRefusedChange[]; dry_run: AdsDryRun; plan_hash: string;
  requires_acknowledgement: boolean; calls: unknown[]; prior_state_hash: string; expires_at: string; created_at: string;
  run_id: string | null; results: unknown[] | null; status_reason: string | null; applied_at: string | null; rollback_of: string | null;
}
export interface AdsApplyRequest { plan_id: string; acknowledged_plan_hash?: string }
export interface AdsApplyAccepted { plan_id: string; run_id: string; status: "applying" }

// reports.ts (and packages/reports/src/catalog.ts for the catalog, typed `unknown` in the contract)
export interface ReportCatalogProvider {
  provider: string; display_name: string; connected: boolean; reporting: boolean;
  levels?: string[]; granularities?: string[]; max_range_days?: number; max_lookback_days?: number;
  clicks?: string; conversions?: string; async_jobs?: boolean;
}
export interface ReportCatalog {
  dimensions: { name: string; description: string }[];
  metrics: { name: string; description: string; computed?: boolean }[];
  providers: ReportCatalogProvider[];
  limits: Record<string, number>;
}
export interface ReportRequest {
  providers?: string[]; from: string; to: string; granularity: "day" | "total"; level: "campaign" | "ad_group" | "ad";
  filters?: { changed_by_trendgate?: boolean; plan_id?: string };
}
export interface ReportRow {
  date: string | null; provider: string; account_id: string; campaign_id: string; campaign_name: string | null;
  ad_group_id: string | null; ad_group_name: string | null; ad_id: string | null; ad_name: string | null;
  impressions: number; clicks: number; spend_micros: string; currency: string; conversions: number | null;
  ctr: number | null; cpc_micros: string | null;
}
export interface ReportProviderOutcome {
  provider: string; status: "ok" | "failed" | "not_reached"; account_id: string | null; currency: string | null;
  time_zone: string | null; rows: number; error: { kind: string; message: string } | null;
}
export interface ReportPreview extends Page<ReportRow> { providers: ReportProviderOutcome[] }
export interface ReportExport {
  id: string; status: "queued" | "running" | "ready" | "failed" | "cancelled"; request: ReportRequest; rows_written: number;
  bytes: number; providers: ReportProviderOutcome[] | null; error: string | null; created_at: string; started_at: string | null;
  finished_at: string | null; expires_at: string; download_url: string | null;
}
