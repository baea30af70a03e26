// Backtest benchmark: POST /api/integrations/webhooks/preview (and the chat settings' preview) through a running
// gateway, for an account of BENCH_TOPICS topics (10,000) with 14 days of history: every topic's hourly buckets for
// 21 days (the trigger window's re-assessment reads a week before each held firing), and the trend events its detection
// passes would have published at the rate the evaluation corpus shows (about 0.06 detections per topic per day, four
// events each: detected, a severity change, a velocity change, the end). Target: under 5 s for each preview.
// Then another account's reads while this one keeps 8 windowed previews going at once (the per-account limit refuses
// all but BACKTEST_CONCURRENCY_PER_ACCOUNT with 429; each client retries after its Retry-After): its p99 against the
// same reads with no backtest running. Target: within 20 %, and no read held over 100 ms longer than the idle maximum.
import { createAccount, createApiKey, createDb } from "@trendgate/db";
import { fmt, startGateway, stopServer } from "./lib.ts";

const TOPICS = Number(process.env.BENCH_TOPICS ?? 10_000);
const DAYS = 14;
const TARGET_SECONDS = 5;
const PARALLEL_BACKTESTS = 8;
const PROBE_SECONDS = 15;
/** The other tenant's reads: one at a time, every 20 ms. */
const PROBE_EVERY_MS = 20;

const quantile = (xs: number[], q: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };

/** Another account's GET /api/trends latencies (ms) over `seconds`. */
async function probe(base: string, key: string, seconds: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t = performance.now();
    const res = await fetch(`${base}/api/trends?limit=20`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`probe: ${res.status}`);
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  return out;
}

export async function benchBacktest() {
  const db = createDb(process.env.DATABASE_URL!);
  const account = await createAccount(db, "bench backtest", "bench");
  const { key } = await createApiKey(db, account.id, "bench");
  const now = Date.now();
  const hour = Math.floor(now / 3600_000) * 3600_000;
  const s0 = performance.now();
  await db.$pool.query(`INSERT INTO topics (id, account_id, key, name, category, created_at, last_seen_at)
    SELECT 'top_bt' || $1 || '_' || g, $1, 'topic ' || g || '|bench/backtest', 'topic ' || g, 'bench/backtest', now(), now() FROM generate_series(1, $2) g`, [account.id, TOPICS]);
  // 21 days of hourly buckets: 90-110 an hour, and on each topic's detection days a burst hour of 400.
  await db.$pool.query(`INSERT INTO topic_buckets (topic_id, bucket_start, count)
    SELECT 'top_bt' || $1 || '_' || g, to_timestamp($3::float8 / 1000 - h * 3600) AT TIME ZONE 'UTC',
           CASE WHEN h % 24 = 12 AND (g * 7 + (h / 24) * 13) % 16 = 0 THEN 400 ELSE 90 + (g * 7 + h * 13) % 21 END
      FROM generate_series(1, $2) g, generate_series(0, $4) h`, [account.id, TOPICS, hour, (DAYS + 7) * 24]);
  await db.$pool.query(`INSERT INTO trends (id, account_id, topic_id, name, category, status, severity, stage, velocity, acceleration, baseline, current,
      anomaly_score, peak_velocity, published_velocity, detected_at, bucket_start, updated_at)
    SELECT 'trend_bt' || $1 || '_' || g, $1, 'top_bt' || $1 || '_' || g, 'topic ' || g, 'bench/backtest', 'ended', 'high', 'dormant', 0, 0, 100, 100,
           0, 300, 300, now(), now(), now() FROM generate_series(1, $2) g`, [account.id, TOPICS]);
  // The events of each detection (day d, hour 12): detected, severity change (+30 min), velocity change (+2 h), ended (+25 h).
  const { rowCount } = await db.$pool.query(`INSERT INTO trend_events (id, account_id, type, trend_id, payload, created_at, dispatched_at)
    SELECT 'evt_bt' || $1 || '_' || g || '_' || d || '_' || k, $1, e.type, 'trend_bt' || $1 || '_' || g,
           jsonb_build_object('id', 'evt_bt' || $1 || '_' || g || '_' || d || '_' || k, 'account_id', $1, 'type', e.type, 'trend_id', 'trend_bt' || $1 || '_' || g,
             'trend_name', 'topic ' || g, 'category', 'bench/backtest', 'severity', e.severity, 'previous_severity', e.previous_severity,
             'velocity', e.velocity, 'previous_velocity', e.previous_velocity, 'anomaly_score', 12, 'sentiment', null,
             'timestamp', to_char(to_timestamp($3::float8 / 1000 - (d * 24 - 12) * 3600) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'summary', 'bench', 'source_link', 'https://trendgate.example/b', 'recommended_next_steps', '[]'::jsonb,
             'previous_ended_at', CASE WHEN k = 0 THEN null END),
           to_timestamp($3::float8 / 1000 - (d * 24 - 12) * 3600 + e.after) AT TIME ZONE 'UTC', now()
      FROM generate_series(1, $2) g, generate_series(1, $4) d,
           (VALUES (0, 'trend.detected', 'medium', null, 300, null, 120), (1, 'trend.severity_changed', 'high', 'medium', 320, 300, 1800),
                   (2, 'trend.velocity_changed', 'high', null, 500, 320, 7200), (3, 'trend.ended', 'high', null, 0, 500, 90000))
             AS e(k, type, severity, previous_severity, velocity, previous_velocity, after)
     WHERE (g * 7 + (d * 24 - 12) / 24 * 13) % 16 = 0 AND (d * 24 - 12) * 3600 - e.after > 0`, [account.id, TOPICS, hour, DAYS]);
  await db.$pool.query("ANALYZE topic_buckets; ANALYZE trend_events; ANALYZE trends");
  const seedSeconds = (performance.now() - s0) / 1000;

  const prefix = `benchbt${Date.now()}`;
  const gateway = await startGateway({ QUEUE_PREFIX: prefix, NODE_ENV: "production", LOG_LEVEL: "warn", HOST: "127.0.0.1", RATE_LIMIT_PLANS: "free:600,bench:100000000" }, 3927);
  const post = async (path: string, body: object) => {
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:3927${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    const json = await res.json() as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return { seconds: (performance.now() - t) / 1000, json };
  };
  const rules = { trigger_type: "trend_detected", threshold_value: 0, delivery_mode: "instant_stream", cooldown_seconds: 0, days: DAYS };
  await post("/api/integrations/webhooks/preview", { ...rules, days: 1 }); // warm the gateway's first request
  const plain = await post("/api/integrations/webhooks/preview", rules);
  const windowed = await post("/api/integrations/webhooks/preview", { ...rules, sensitivity: "normal", cooldown_seconds: 3600, trigger_window_minutes: 30, recovery_window_minutes: 120 });
  const chat = await post("/api/integrations/chat/settings/preview", { min_severity: "medium" });

  // Tenant isolation: another account's reads, alone and beside this account's parallel backtests.
  const other = await createAccount(db, "bench backtest neighbour", "bench");
  const { key: otherKey } = await createApiKey(db, other.id, "bench");
  const base = "http://127.0.0.1:3927";
  await probe(base, otherKey, 2); // warm
  const idle = await probe(base, otherKey, PROBE_SECONDS);
  let busy = true;
  let ran = 0;
  let refused = 0;
  const client = async () => {
    while (busy) {
      const res = await fetch(`${base}/api/integrations/webhooks/preview`, {
        method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ ...rules, sensitivity: "normal", cooldown_seconds: 3600, trigger_window_minutes: 30, recovery_window_minutes: 120 }),
      });
      await res.arrayBuffer();
      if (res.status === 200) ran++;
      else if (res.status === 429) { refused++; await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after") ?? 1) * 1000)); }
      else throw new Error(`parallel backtest: ${res.status}`);
    }
  };
  const clients = Array.from({ length: PARALLEL_BACKTESTS }, client);
  await new Promise((r) => setTimeout(r, 500)); // the first backtests under way
  const loaded = await probe(base, otherKey, PROBE_SECONDS);
  busy = false;
  await Promise.all(clients);
  await stopServer(gateway);
  if (!process.env.BENCH_KEEP) await db.account.deleteMany({ where: { id: { in: [account.id, other.id] } } });
  else console.log(`kept account ${account.id} (BENCH_KEEP)`);
  await db.$disconnect();

  const line = (name: string, r: { seconds: number; json: Record<string, unknown> }, what: string) =>
    console.log(`${name}: ${fmt(r.seconds, 2)} s (${fmt(r.json.events_replayed as number)} events replayed${r.json.truncated ? `, TRUNCATED: ${r.json.truncated_reason}` : ""}, ${what}) ${r.seconds < TARGET_SECONDS ? "✓" : "✗"} target < ${TARGET_SECONDS} s`);
  console.log(`\n## Backtest: ${fmt(TOPICS)} topics x ${DAYS} days (${fmt(rowCount ?? 0)} stored trend events; ${fmt(TOPICS * (DAYS + 7) * 24)} bucket rows; seeded in ${fmt(seedSeconds, 1)} s)`);
  line("webhook preview, trend_detected", plain, `${fmt(plain.json.deliveries as number)} deliveries`);
  const suppressed = windowed.json.suppressed as Record<string, number>;
  line("webhook preview, normal sensitivity + 30 min trigger window + cooldown + recovery window", windowed,
    `${fmt(windowed.json.deliveries as number)} deliveries; the detector re-assessed the held firings; suppressed ${JSON.stringify(suppressed)}`);
  line("chat settings preview", chat, `${fmt(chat.json.items_opened as number)} items`);
  const p99 = (xs: number[]) => quantile(xs, 0.99);
  const ratio = p99(loaded) / p99(idle);
  const extraMax = Math.max(...loaded) - Math.max(...idle);
  console.log(`another account's GET /api/trends, alone: p50 ${fmt(quantile(idle, 0.5), 1)} ms, p99 ${fmt(p99(idle), 1)} ms, max ${fmt(Math.max(...idle), 1)} ms (${idle.length} reads)`);
  console.log(`  beside ${PARALLEL_BACKTESTS} parallel windowed backtests of one account (${ran} ran, ${refused} answered 429): p50 ${fmt(quantile(loaded, 0.5), 1)} ms, p99 ${fmt(p99(loaded), 1)} ms, max ${fmt(Math.max(...loaded), 1)} ms (${loaded.length} reads)`);
  console.log(`  p99 ${fmt(ratio * 100 - 100, 0)} % over alone ${ratio <= 1.2 ? "✓" : "✗"} target within 20 %; max ${fmt(extraMax, 0)} ms over alone ${extraMax <= 100 ? "✓" : "✗"} target <= 100 ms`);
}
