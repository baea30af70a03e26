import { z } from "zod";

import { DETECTION_DEFAULTS } from "./detection-defaults.ts";

export * from "./retry-schedules.ts";
export * from "./detection-defaults.ts";

// All configuration comes from the environment, validated once at start-up. `.env.example` documents each variable.
const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `must be a ${protocols.map((p) => p + "//").join(" or ")} URL`);

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

// "free:600,pro:6000" -> { free: 600, pro: 6000 } requests per window.
const plans = z
  .string()
  .regex(/^\s*[a-z0-9_-]+:\d+\s*(,\s*[a-z0-9_-]+:\d+\s*)*$/, "must look like free:600,pro:6000")
  .transform((s) => Object.fromEntries(s.split(",").map((p) => p.trim().split(":")).map(([k, v]) => [k, Number(v)])))
  .refine((p) => "free" in p, "must define the plan `free` (the default plan of new accounts)");

const base64Key32 = z
  .string()
  .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 random bytes, base64-encoded (openssl rand -base64 32)");

// "5,300,1800" -> [5, 300, 1800]: a retry schedule.
const seconds = z
  .string()
  .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, "must be comma-separated seconds, e.g. 5,300,1800")
  .transform((s) => s.split(",").map(Number));

const csv = z.string().transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean));

/**
 * The limits every outbound call to a provider gets unless its connector asks for more (ProviderHttp reads them from
 * PROVIDER_ENV, where loadConfig puts the validated values).
 */
export const OUTBOUND_LIMIT_DEFAULTS = Object.freeze({
  OUTBOUND_CONNECT_TIMEOUT_MS: 5000,
  OUTBOUND_TIMEOUT_MS: 15_000,
  CONNECTOR_RESPONSE_MAX_BYTES: 5 * 1024 * 1024,
});

export const ConfigSchema = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  HOST: z.string().default("0.0.0.0"),
  PORT: int(1, 65535).default(3000),
  DATABASE_URL: url(["postgres:", "postgresql:"]).default("postgresql://postgres@127.0.0.1:5432/trendgate"),
  // A read replica (streaming replication) for the read-only routes that tolerate its lag: trends, recommendations
  // and backtests. Unset: everything reads the primary.
  DATABASE_READ_URL: url(["postgres:", "postgresql:"]).optional(),
  // How long to wait for a new database connection before failing the request (a hung server, not a stopped one).
  DATABASE_CONNECT_TIMEOUT_MS: int(100, 60_000).default(5000),
  // One server (redis://, rediss://) or a Redis Cluster by a few seed nodes: redis+cluster://host:port,host:port
  REDIS_URL: z.string().refine((v) => /^rediss?\+cluster:\/\/(?:[^@/]*@)?[^/?#,@]+:\d+(?:,[^/?#,@]+:\d+)*\/?$/.test(v) || url(["redis:", "rediss:"]).safeParse(v).success,
    "must be redis://host:port[/db], rediss://..., or a Redis Cluster: redis+cluster://host:port[,host:port...] (rediss+cluster:// for TLS)")
    .default("redis://127.0.0.1:6379"),
  // No braces: each queue's keys get a Redis Cluster hash tag of their own ({queue}); a brace here would pin them all to one slot.
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ - only").default("trendgate"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ADMIN_TOKEN: z.string().min(24, "must be at least 24 characters (openssl rand -hex 24)"),
  ENCRYPTION_KEY: base64Key32,
  RATE_LIMIT_WINDOW_SECONDS: int(1, 86_400).default(60),
  // Requests per window per account (all its keys together), by plan.
  RATE_LIMIT_PLANS: plans.default({ free: 600, pro: 6000, enterprise: 60000 } as never),
  // Active (not revoked, not expired) API keys an account may hold; creating one more is 409 api_key_limit_reached.
  MAX_ACTIVE_KEYS_PER_ACCOUNT: int(1, 10_000).default(20),
  BODY_LIMIT_BYTES: int(1024, 50 * 1024 * 1024).default(1024 * 1024),
  // HTTP server limits (apps/gateway/src/http/server.ts): time to receive a request's headers, and the whole request.
  HTTP_HEADERS_TIMEOUT_MS: int(500, 600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: int(1000, 3_600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(1000, 600_000).default(65_000),
  HTTP_MAX_HEADER_BYTES: int(1024, 1024 * 1024).default(16 * 1024),
  IDEMPOTENCY_TTL_SECONDS: int(86_400, 30 * 86_400).default(86_400),
  IDEMPOTENCY_LOCK_SECONDS: int(1, 600).default(60),
  AUTH_CACHE_SECONDS: int(0, 300).default(30),
  AUTH_FAILURES_PER_MINUTE: int(1, 100_000).default(30),
  // Express "trust proxy": false (no proxy), true, a hop count, or comma-separated addresses/CIDRs of your proxies.
  TRUST_PROXY: z.string().default("false").transform((v): boolean | number | string =>
    v === "true" ? true : v === "false" || v === "" ? false : /^\d+$/.test(v) ? Number(v) : v),
  SHUTDOWN_TIMEOUT_SECONDS: int(1, 600).default(25),
  STREAM_HEARTBEAT_MS: int(100, 600_000).default(30_000),
  STREAM_MAX_BUFFER_BYTES: int(1024, 256 * 1024 * 1024).default(1024 * 1024),
  STREAM_MAX_SOCKETS_PER_KEY: int(1, 100_000).default(20),
  STREAM_MAX_SOCKETS_PER_ACCOUNT: int(1, 1_000_000).default(100),
  WORKER_CONCURRENCY: int(1, 1000).default(20),
  WORKER_QUEUES: csv.optional().describe("queues this worker process drains; all when unset"),
  WORKER_LOCK_DURATION_MS: int(1000, 600_000).default(30_000),
  WORKER_STALLED_INTERVAL_MS: int(1000, 600_000).default(30_000),
  SWEEP_INTERVAL_MS: int(100, 600_000).default(5000),
  SWEEP_GRACE_SECONDS: int(0, 3600).default(30),
  SCHEDULER_CHECK_SECONDS: int(1, 3600).default(15),
  // A queue worker that runs nothing while jobs wait, at two checks in a row, is replaced (0 = off; fetch-watchdog.ts).
  WORKER_WATCHDOG_SECONDS: int(0, 3600).default(30),

  OUTBOUND_ALLOWLIST: csv.default([]),
  OUTBOUND_CONNECT_TIMEOUT_MS: int(100, 60_000).default(OUTBOUND_LIMIT_DEFAULTS.OUTBOUND_CONNECT_TIMEOUT_MS),
  OUTBOUND_TIMEOUT_MS: int(100, 120_000).default(OUTBOUND_LIMIT_DEFAULTS.OUTBOUND_TIMEOUT_MS),
  OUTBOUND_RESPONSE_MAX_BYTES: int(0, 1024 * 1024).default(16 * 1024),
  CONNECTOR_RESPONSE_MAX_BYTES: int(1024, 64 * 1024 * 1024).default(OUTBOUND_LIMIT_DEFAULTS.CONNECTOR_RESPONSE_MAX_BYTES),

  // The default after Svix: attempt 1 at once, then these delays: 8 attempts over about 27.6 hours.
  WEBHOOK_RETRY_SCHEDULE_SECONDS: seconds.default([5, 300, 1800, 7200, 18000, 36000, 36000] as never),
  WEBHOOK_RETRY_JITTER: z.coerce.number().min(0).max(0.5).default(0.2),
  WEBHOOK_MAX_RETRY_AFTER_SECONDS: int(1, 7 * 86_400).default(86_400),
  WEBHOOK_DISABLE_AFTER_SECONDS: int(60, 30 * 86_400).default(5 * 86_400),
  WEBHOOK_CONCURRENCY: int(1, 1000).default(50),
  // Per worker process: requests at once to one webhook endpoint (subscription), and to one host:port in all (a safety
  // net above the per-endpoint cap, so a hanging endpoint cannot stall its neighbours on the same host).
  WEBHOOK_ENDPOINT_CONCURRENCY: int(1, 1000).default(10),
  WEBHOOK_DESTINATION_CONCURRENCY: int(1, 1000).default(25),
  WEBHOOK_SUBSCRIPTION_CACHE_MS: int(0, 60_000).default(2000),
  // How long the fan-out reuses an account's chat and workflow connections (which exist, their settings and selection)
  // when routing trend events: a connection made, changed or removed applies to events within this long.
  TREND_ROUTING_CACHE_MS: int(0, 60_000).default(2000),
  DETECTION_BUCKET_SECONDS: int(60, 86_400).default(DETECTION_DEFAULTS.bucketSeconds),
  DETECTION_INTERVAL_SECONDS: int(1, 86_400).default(60),
  DETECTION_BASELINE_HOURS: int(6, 24 * 60).default(DETECTION_DEFAULTS.baselineHours),
  DETECTION_MIN_MENTIONS_PER_HOUR: z.coerce.number().min(0).default(DETECTION_DEFAULTS.minMentionsPerHour),
  DETECTION_SEVERITY_HOLD_SECONDS: int(0, 86_400).default(1800),
  DETECTION_VELOCITY_EVENT_MIN_SECONDS: int(0, 86_400).default(10_800),
  DETECTION_END_AFTER_HOURS: int(6, 168).default(12), // at least the 6 h a trend is cooling (detection COOLING_HOURS)
  DETECTION_SHARD_TOPICS: int(100, 1_000_000).default(2000),
  // Topics whose fitted model a worker keeps between passes (about 6 KB each; 0 = fit every pass).
  DETECTION_FIT_CACHE_TOPICS: int(0, 1_000_000).default(10_000),
  // Unset: http://localhost:${PORT} (filled in after parsing, so changing PORT alone keeps outward links right).
  PUBLIC_BASE_URL: url(["http:", "https:"]).optional(),
  // How long a briefing link (a trend event's source_link, GET /briefings/{token}) opens its page: 5 minutes to 90 days.
  BRIEFING_LINK_TTL_SECONDS: int(300, 90 * 86_400).default(7 * 86_400),
  DELIVERY_BODY_MAX_BYTES: int(16 * 1024, 1024 * 1024).default(64 * 1024),
  WEBHOOK_RECORD_BATCH_SIZE: int(1, 1000).default(50),
  WEBHOOK_RECORD_BATCH_WAIT_MS: int(0, 1000).default(5),
  // How often account events are pushed to the webhooks that list them and held trigger-window firings are decided:
  // their latency (5 s, as the sweeper gave them by default; an idle tick is two indexed queries).
  WEBHOOK_TICK_SECONDS: int(1, 3600).default(5),
  SOCIAL_POLL_INTERVAL_SECONDS: int(1, 86_400).default(300),
  SOCIAL_POLL_TICK_SECONDS: int(1, 3600).default(30),
  // Each social provider's endpoint variables (SOCIAL_X_BASE_URL, ...) are named by its manifest and read from PROVIDER_ENV.

  // Connections (browser OAuth). Providers' own variables (client ids and secrets, endpoint overrides) are named by
  // their manifests and read from PROVIDER_ENV, so a new provider needs no edit here.
  OAUTH_REDIRECT_URL: url(["http:", "https:"]).optional().describe("default: PUBLIC_BASE_URL + /api/integrations/oauth/callback"),
  OAUTH_STATE_TTL_SECONDS: int(60, 3600).default(600),
  OAUTH_RETURN_ORIGINS: csv.default([]),
  OAUTH_REFRESH_BUFFER_SECONDS: int(0, 86_400).default(900),
  OAUTH_REFRESH_LOCK_TIMEOUT_MS: int(100, 120_000).default(15_000),
  // The outbox of chat messages, workflow pushes and conversion events (ads applies next): attempt 1 at once, then these.
  OUTBOX_RETRY_SCHEDULE_SECONDS: seconds.default([5, 30, 120, 600, 1800, 3600] as never),
  OUTBOX_CONCURRENCY: int(1, 1000).default(20),
  // Attempt records of concurrent jobs are written together: up to this many, or after this wait.
  OUTBOX_RECORD_BATCH_SIZE: int(1, 5000).default(1000),
  OUTBOX_RECORD_BATCH_WAIT_MS: int(0, 1000).default(2),
  // A new conversion event waits this long for others to share its request (batched per pixel).
  CONVERSION_BATCH_WAIT_MS: int(0, 60_000).default(200),
  // Conversion events of a connection that needs re-authorization look again this often.
  CONVERSION_REAUTH_RECHECK_SECONDS: int(1, 3600).default(30),
  // Workflow pushes a workflow took (2xx) are looked for among its runs (n8n's execution list) once this old, every
  // interval; one not run within WORKFLOW_CONFIRM_WITHIN_SECONDS is sent again once, under the same event id.
  WORKFLOW_CONFIRM_AFTER_SECONDS: int(0, 3600).default(30),
  WORKFLOW_CONFIRM_WITHIN_SECONDS: int(1, 86_400).default(600),
  WORKFLOW_CONFIRM_INTERVAL_SECONDS: int(1, 3600).default(15),
  CHAT_POST_INTERVAL_MS: int(0, 60_000).default(1000),
  OPERATOR_TICK_SECONDS: int(1, 3600).default(30),
  OPERATOR_RENOTIFY_SECONDS: int(60, 7 * 86_400).default(900),
  // An ads plan can be applied this long after its preview (then preview again: the targets may have changed).
  ADS_PLAN_TTL_SECONDS: int(60, 86_400).default(900),
  // Executor plans: the private Ed25519 JWK that signs them (npm run setup makes one; unset: the executor routes
  // answer 501), how long a caller may start executing one, and how long after that its results are accepted.
  EXECUTOR_SIGNING_KEY: z.string().min(1).optional(),
  EXECUTOR_PLAN_TTL_SECONDS: int(60, 3600).default(600),
  EXECUTOR_REPORT_WINDOW_SECONDS: int(60, 7 * 86_400).default(3600),
  // Ads reports: a preview page's largest size; an export is streamed in the response when the whole report is at
  // most this many rows and read within this many seconds, else it becomes a job (stored in chunks of this size,
  // kept this long after it is ready).
  REPORT_PREVIEW_MAX_ROWS: int(1, 10_000).default(1000),
  REPORT_STREAM_MAX_ROWS: int(0, 1_000_000).default(50_000),
  REPORT_STREAM_MAX_SECONDS: int(1, 600).default(10),
  REPORT_EXPORT_CHUNK_BYTES: int(16_384, 64 * 1024 * 1024).default(1024 * 1024),
  REPORT_EXPORT_TTL_SECONDS: int(60, 30 * 86_400).default(86_400),
  // Backtests (webhook and chat settings previews): events replayed at most, and seconds spent at most, before the
  // answer stops there marked `truncated`; backtests running at once per account, across the fleet (over it: 429).
  BACKTEST_MAX_EVENTS: int(1, 10_000_000).default(100_000),
  BACKTEST_MAX_SECONDS: int(1, 600).default(10),
  BACKTEST_CONCURRENCY_PER_ACCOUNT: int(1, 100).default(2),
  // Threads per gateway that run backtests, off the event loop that serves requests (each runs four at once).
  BACKTEST_THREADS: int(1, 64).default(1),
  // Retention (docs/operating.md "Retention"): rows older than this many days are deleted in small batches by one worker an
  // interval (0 = keep forever). Signals and buckets are always kept for DETECTION_BASELINE_HOURS plus a day.
  // DELIVERIES covers finished webhook deliveries, their executions, finished outbox messages and their attempts;
  // EVENTS covers dispatched trend events and account events. Pending and retrying rows are never deleted.
  RETENTION_INTERVAL_SECONDS: int(60, 7 * 86_400).default(3600),
  RETENTION_SIGNALS_DAYS: int(0, 3650).default(30),
  RETENTION_BUCKETS_DAYS: int(0, 3650).default(90),
  RETENTION_DELIVERIES_DAYS: int(0, 3650).default(30),
  RETENTION_EVENTS_DAYS: int(0, 3650).default(90),
  RETENTION_BATCH_SIZE: int(100, 100_000).default(5000),
  RETENTION_PASS_SECONDS: int(1, 3600).default(120),
});

export type Config = Omit<z.infer<typeof ConfigSchema>, "PUBLIC_BASE_URL"> & {
  /** Where links sent outside point (briefings, OAuth redirect_uri); defaults to this server's own port on localhost. */
  PUBLIC_BASE_URL: string;
  /** The whole environment, for the variables providers' manifests name (@trendgate/connector-core provider-config). */
  PROVIDER_ENV: Readonly<Record<string, string>>;
};

/** Where browsers come back from a provider's consent page. */
export const oauthRedirectUrl = (c: Config) => c.OAUTH_REDIRECT_URL ?? new URL("/api/integrations/oauth/callback", c.PUBLIC_BASE_URL).toString();

export class ConfigError extends Error {}

/** Parses the environment; throws ConfigError whose message is one line naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = ConfigSchema.safeParse(clean);
  if (parsed.success) {
    const data = parsed.data;
    // Connectors read their limits from PROVIDER_ENV: the validated values, defaults included.
    const limits = Object.fromEntries(Object.keys(OUTBOUND_LIMIT_DEFAULTS).map((k) => [k, String(data[k as keyof typeof OUTBOUND_LIMIT_DEFAULTS])]));
    return { ...data, PUBLIC_BASE_URL: data.PUBLIC_BASE_URL ?? `http://localhost:${data.PORT}`, PROVIDER_ENV: Object.freeze({ ...(clean as Record<string, string>), ...limits }) };
  }
  const problems = parsed.error.issues.map((i) => {
    const name = String(i.path[0]);
    const msg = i.code === "invalid_type" && clean[name] === undefined ? "is required" : i.message;
    return `${name} ${msg}`;
  });
  throw new ConfigError(`Invalid configuration: ${problems.join("; ")}. See .env.example.`);
}

/** For entry points: load the config or print the one-line reason and exit. */
export function loadConfigOrExit(env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(e.message + "\n");
      process.exit(78); // EX_CONFIG
    }
    throw e;
  }
}
