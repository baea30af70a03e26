// Storage soak: BENCH_SOAK_SIGNALS (100,000,000) signal rows and BENCH_SOAK_ATTEMPTS (10,000,000) webhook attempt
// rows spread evenly over BENCH_SOAK_DAYS (40) days to now, so the last 10 are past the default 30-day retention, in a
// database of its own (<DATABASE_URL's database>_soak, migrated, dropped at the end). Seeding is bulk SQL, one day
// partition at a time: it is not what is measured. What is measured runs production's own code at production's
// settings: ingestion (insertSignalBatches, batches of 200 new signals) and attempt records (recordAttempts, batches of
// 100) written back to back for BENCH_SOAK_SECONDS (20) before, then during one retention pass (runRetentionPass with
// the configured policy, batch size and budget), then again after it; the write p50/p99/max of each phase, the pass's
// time and what it dropped, and the tables' size before and after. Targets: the pass drops whole days (no row-by-row
// delete from a day partition) and write p99 after it is within 20 % of before (nothing left to vacuum). About 650
// bytes of disk per signal row (indexes included): ~70 GB at the default size.
import { execFileSync } from "node:child_process";
import pg from "pg";
import { loadConfig } from "@trendgate/config";
import { createAccount, createDb, dayPartitions, ensureDays, insertSignalBatches, newId, recordAttempts, tableSizes, type AttemptRecord, type Db } from "@trendgate/db";
import { retentionPolicy, runRetentionPass } from "../apps/worker/src/sweepers/retention.ts";
import { fmt, root } from "./lib.ts";

const SIGNALS = Number(process.env.BENCH_SOAK_SIGNALS ?? 100_000_000);
const ATTEMPTS = Number(process.env.BENCH_SOAK_ATTEMPTS ?? 10_000_000);
const DAYS = Number(process.env.BENCH_SOAK_DAYS ?? 40);
const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 20);
/** Rows per seeding statement (a day is seeded in statements of this many rows). */
const CHUNK = 1_000_000;
const DAY_MS = 86_400_000;
const TABLES = ["signals", "webhook_executions"];

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const quantile = (xs: number[], q: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN; };
const gb = (b: number) => `${fmt(b / 1e9, 2)} GB`;

/** A fresh, migrated database beside DATABASE_URL's, for the soak alone. */
async function soakDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const url = new URL(process.env.DATABASE_URL!);
  const name = `${decodeURIComponent(url.pathname.slice(1))}_soak`;
  const adminUrl = new URL(url.href);
  adminUrl.pathname = "/postgres";
  const admin = async (sql: string) => { const c = new pg.Client({ connectionString: adminUrl.href }); await c.connect(); try { await c.query(sql); } finally { await c.end(); } };
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  url.pathname = `/${name}`;
  execFileSync("node_modules/.bin/prisma", ["migrate", "deploy"], { cwd: root, stdio: "pipe", env: { ...process.env, DATABASE_URL: url.href } });
  return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

async function seed(db: Db, accountId: string, now: number) {
  const first = Math.floor(now / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS;
  await ensureDays(db.$pool, { table: "signals", column: "observed_at" }, isoDay(first), isoDay(now));
  await ensureDays(db.$pool, { table: "webhook_executions", column: "created_at" }, isoDay(first), isoDay(now));
  const started = performance.now();
  for (let d = 0; d < DAYS; d++) {
    const day = first + d * DAY_MS;
    // Today only up to now: rows of the future would be no soak of anything real.
    const span = Math.min(DAY_MS, now - day) - 1;
    for (const [table, total] of [["signals", SIGNALS], ["webhook_executions", ATTEMPTS]] as const) {
      const perDay = Math.round(total / DAYS);
      for (let from = 0; from < perDay; from += CHUNK) {
        const n = Math.min(CHUNK, perDay - from);
        const at = `(to_timestamp($2::float8 / 1000) AT TIME ZONE 'UTC') + ((($3::bigint + g) * $4::bigint / $5::bigint) * interval '1 millisecond')`;
        await db.$pool.query(table === "signals"
          ? `INSERT INTO signals (id, account_id, source, external_id, topic, category, count, observed_at, created_at, text)
             SELECT 'sig_soak' || $2 || '_' || ($3::bigint + g), $1, 'x', 'soak-' || $2 || '-' || ($3::bigint + g), 'topic ' || (g % 5000), 'bench/soak',
                    1 + g % 7, ${at}, ${at}, 'a post about topic ' || (g % 5000) || ' and what people say of it this hour'
               FROM generate_series(0, $6::int - 1) g`
          : `INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers,
               request_body_bytes, response_status, response_body, duration_ms, created_at)
             SELECT 'exe_soak' || $2 || '_' || ($3::bigint + g), $1, 'wh_soak' || (g % 200), 'msg_soak' || $2 || '_' || ($3::bigint + g), 1, 'trend_event',
                    'succeeded', 'https://hooks.example.com/' || (g % 200), '{"content-type":"application/json"}', 900, 204, '', 40, ${at}
               FROM generate_series(0, $6::int - 1) g`,
          [accountId, day, from, span, perDay, n]);
      }
    }
    process.stdout.write(`\r  seeding: day ${d + 1}/${DAYS} (${fmt((performance.now() - started) / 1000)} s)`);
  }
  process.stdout.write("\n");
  await db.$pool.query("ANALYZE signals; ANALYZE webhook_executions");
}

/** Production's writes, back to back until `until` settles: each batch's latency (ms) per kind. */
async function writes(db: Db, accountId: string, until: Promise<unknown>) {
  let done = false;
  void until.finally(() => { done = true; });
  const out = { signals: [] as number[], attempts: [] as number[] };
  let n = 0;
  const signalsLoop = async () => {
    while (!done) {
      const observed = new Date().toISOString();
      const signals = Array.from({ length: 200 }, () => ({ id: `live-${n++}-${Math.random().toString(36).slice(2)}`, source: "x", topic: `topic ${n % 5000}`, category: "bench/soak", count: 1, observed_at: observed }));
      const t = performance.now();
      await insertSignalBatches(db, [{ accountId, signals }]);
      out.signals.push(performance.now() - t);
    }
  };
  const attemptsLoop = async () => {
    while (!done) {
      const records: AttemptRecord[] = Array.from({ length: 100 }, () => ({
        execution: { id: newId("exe"), accountId, subscriptionId: "wh_soak0", deliveryId: newId("msg"), attempt: 1, trigger: "trend_event", outcome: "succeeded",
          requestUrl: "https://hooks.example.com/0", requestHeaders: { "content-type": "application/json" }, requestBodyBytes: 900, responseStatus: 204,
          responseBody: "", responseBodyTruncated: false, durationMs: 40, errorClass: null, errorMessage: null, nextRetryAt: null },
        delivery: { status: "succeeded", attempts: 1, nextAttemptAt: new Date(), lastError: null },
      }));
      const t = performance.now();
      await recordAttempts(db, records, 86_400);
      out.attempts.push(performance.now() - t);
    }
  };
  await Promise.all([signalsLoop(), attemptsLoop()]);
  return out;
}

const line = (phase: string, w: { signals: number[]; attempts: number[] }) =>
  (["signals", "attempts"] as const).map((k) => `  ${phase.padEnd(16)} ${k.padEnd(8)} ${fmt(w[k].length).padStart(6)} batches  p50 ${fmt(quantile(w[k], 0.5), 1).padStart(6)} ms  p99 ${fmt(quantile(w[k], 0.99), 1).padStart(6)} ms  max ${fmt(Math.max(...w[k]), 1).padStart(7)} ms`).join("\n");

export async function benchSoak() {
  console.log(`\n## Storage soak: ${fmt(SIGNALS)} signals and ${fmt(ATTEMPTS)} attempts over ${DAYS} days, through ingestion and retention`);
  const target = await soakDatabase();
  const db = createDb(target.url);
  try {
    const config = loadConfig({ ...process.env, DATABASE_URL: target.url });
    const account = await createAccount(db, "bench soak", "bench");
    const now = Date.now();
    await seed(db, account.id, now);
    const sizes = async () => {
      const all = await tableSizes(db.$pool, TABLES);
      const parts = await Promise.all(TABLES.map((t) => dayPartitions(db.$pool, t)));
      return TABLES.map((t, i) => `${t} ${gb(all[t].bytes)} (~${fmt(all[t].rows_estimate)} rows, ${parts[i].length} day partitions)`).join("; ");
    };
    console.log(`  before: ${await sizes()}`);

    const before = await writes(db, account.id, new Promise((r) => setTimeout(r, SECONDS * 1000)));
    const t = performance.now();
    const pass = runRetentionPass(db.$pool, { policy: retentionPolicy(config), batchSize: config.RETENTION_BATCH_SIZE, budgetMs: config.RETENTION_PASS_SECONDS * 1000 });
    const during = await writes(db, account.id, pass);
    const deleted = await pass;
    const passSeconds = (performance.now() - t) / 1000;
    const after = await writes(db, account.id, new Promise((r) => setTimeout(r, SECONDS * 1000)));
    console.log(`  retention pass: ${fmt(passSeconds, 1)} s; removed (rows, a dropped day's as its estimate): ${JSON.stringify(deleted)}`);
    console.log(`  after:  ${await sizes()}`);
    console.log(line("before the pass", before));
    console.log(line("during the pass", during));
    console.log(line("after the pass", after));
    const rowDeletes = (await db.$pool.query<{ n: string }>(`SELECT coalesce(sum(n_tup_del), 0) AS n FROM pg_stat_user_tables
       WHERE relname LIKE 'signals_p%' OR relname LIKE 'webhook_executions_p%'`)).rows[0].n;
    console.log(`  rows deleted one by one from the day partitions: ${rowDeletes} (target 0)`);
    for (const k of ["signals", "attempts"] as const) {
      const ratio = quantile(after[k], 0.99) / quantile(before[k], 0.99);
      console.log(`  ${k} write p99 after / before the pass: ${fmt(ratio, 2)}x (target <= 1.2x: dropping days leaves nothing to vacuum) ${ratio <= 1.2 ? "met" : "NOT met"}`);
    }
  } finally {
    await db.$disconnect();
    if (process.env.BENCH_SOAK_KEEP !== "1") await target.drop();
  }
}
