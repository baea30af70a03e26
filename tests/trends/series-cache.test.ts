import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, resolveConfig, type EngineOptions } from "@trendgate/trends";
import { LATE_HOURS, SERIES_REBUILD_HOURS } from "../../packages/trends/src/engine/series-cache.ts";
import { readShard, type ShardSeries } from "../../packages/trends/src/engine/shard-series.ts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

// The topic_series cache (packages/trends/src/engine/series-cache.ts) must be invisible: a pass reading through it
// sees exactly what a pass reading topic_buckets in full sees, except signals more than LATE_HOURS late, which it
// sees at the topic's next rebuild (within SERIES_REBUILD_HOURS).

const HOUR = 3600_000;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example", velocityEventStep: 0.2 };
const cfg = resolveConfig(options);
const whole = { index: 0, count: 1 };
/** 40 minutes into the hour after the real one: a fixed clock for the test, buckets placed relative to it. */
const NOW = new Date((Math.floor(Date.now() / HOUR) + 1) * HOUR + 40 * 60_000);
const hoursFrom = (now: Date, h: number) => new Date(now.getTime() + h * HOUR);
const TOPICS = ["Cache A", "Cache B", "Cache C"];

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

let n = 0;
/** `count` mentions of `topic` observed at `at`, ingested now. */
async function mention(accountId: string, topic: string, at: Date, count: number) {
  const s = signal({ id: `sc-${n++}`, topic, category: "tests/cache", count, observed_at: at.toISOString(), sentiment: ((n % 7) - 3) / 3 });
  expect(await insertSignals(gw.deps.db, accountId, [s])).toBe(1);
  await keepSeen(accountId);
}

/** Candidates must have been seen in the bucket in progress; the test's clock runs ahead of the real one. */
const keepSeen = (accountId: string) => gw.deps.db.$pool.query(`UPDATE topics SET last_seen_at = '2100-01-01' WHERE account_id = $1`, [accountId]);

/** Eight days of hourly mentions up to the hour before `now`, with an account-wide gap (an outage) 30 hours back. */
async function seed(accountId: string, now: Date) {
  const signals = [];
  const last = Math.floor(now.getTime() / HOUR) - 1;
  for (const [t, topic] of TOPICS.entries()) {
    for (let h = 0; h < 8 * 24; h++) {
      if (h === 30) continue;
      const count = 90 + ((t * 7 + h * 13) % 21) + (t === 0 && h === 0 ? 300 : 0);
      signals.push(signal({ id: `seed-${t}-${h}`, topic, category: "tests/cache", count, sentiment: ((h % 5) - 2) / 2, observed_at: new Date((last - h) * HOUR + 60_000).toISOString() }));
    }
  }
  expect(await insertSignals(gw.deps.db, accountId, signals)).toBe(signals.length);
  await keepSeen(accountId);
}

/** A pass's read through the cache, committed (so it writes the cache as a pass does). */
async function warm(accountId: string, now: Date) {
  const client = await gw.deps.db.$pool.connect();
  try {
    await client.query("BEGIN");
    const s = await readShard(client, accountId, now, cfg, whole);
    await client.query("COMMIT");
    return s;
  } finally { client.release(); }
}

/** The same read without any cache, rolled back: what topic_buckets say. */
async function cold(accountId: string, now: Date) {
  const client = await gw.deps.db.$pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(`DELETE FROM topic_series WHERE topic_id IN (SELECT id FROM topics WHERE account_id = $1)`, [accountId]);
    return await readShard(client, accountId, now, cfg, whole);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

const view = (s: ShardSeries) => ({
  first: s.first, current: s.current, observed: s.observed, outages: s.outages,
  candidates: s.candidates.map((c) => ({ id: c.id, sentiment: c.sentiment, trend: c.trend?.id, y: Array.from(c.y) })).sort((a, b) => a.id.localeCompare(b.id)),
});
const seriesRows = (accountId: string) => gw.deps.db.$pool.query<{ topic_id: string; first_bucket: number; through_bucket: number; built_at: Date }>(
  `SELECT ts.topic_id, ts.first_bucket, ts.through_bucket, ts.built_at FROM topic_series ts JOIN topics t ON t.id = ts.topic_id WHERE t.account_id = $1`, [accountId]).then((r) => r.rows);
const yAt = (s: ShardSeries, topicId: string, at: Date) => s.candidates.find((c) => c.id === topicId)!.y[Math.floor(at.getTime() / HOUR) - s.first];
const topicId = async (accountId: string, name: string) =>
  (await gw.deps.db.$pool.query<{ id: string }>(`SELECT id FROM topics WHERE account_id = $1 AND name = $2`, [accountId, name])).rows[0].id;

describe("topic_series cache", () => {
  test("a pass through a warm cache reads what a pass without it reads, as signals keep arriving and hours pass", async () => {
    const a = await gw.account();
    await seed(a.accountId, NOW);
    const first = await warm(a.accountId, NOW); // builds the cache
    expect(first.candidates).toHaveLength(3);
    expect(first.outages.length).toBeGreaterThan(0); // the gap is judged an outage, cache or not
    const rows = await seriesRows(a.accountId);
    expect(rows).toHaveLength(3);
    expect(rows[0].through_bucket).toBe(Math.floor(NOW.getTime() / HOUR) - LATE_HOURS - 1); // nothing within LATE_HOURS

    const again = view(await warm(a.accountId, NOW));
    expect(again.candidates).toHaveLength(3);
    expect(again).toEqual(view(await cold(a.accountId, NOW)));
    // new mentions in the bucket in progress and in the last closed bucket
    await mention(a.accountId, "Cache B", hoursFrom(NOW, 0), 40);
    await mention(a.accountId, "Cache C", hoursFrom(NOW, -1), 500);
    expect(view(await warm(a.accountId, NOW))).toEqual(view(await cold(a.accountId, NOW)));

    // Hours go by (the cache lags, then is extended), with mentions each hour.
    for (const h of [1, 2, 3, 4, 5, 6, 9]) {
      const now = hoursFrom(NOW, h);
      for (const topic of TOPICS) await mention(a.accountId, topic, hoursFrom(now, -1), 100 + h);
      const w = view(await warm(a.accountId, now));
      expect(w).toEqual(view(await cold(a.accountId, now)));
      expect(w.candidates).toHaveLength(3);
    }
    const through = (await seriesRows(a.accountId))[0].through_bucket;
    expect(through).toBeGreaterThan(Math.floor(NOW.getTime() / HOUR) - LATE_HOURS - 1); // extended
    expect(through).toBeLessThanOrEqual(Math.floor(hoursFrom(NOW, 9).getTime() / HOUR) - LATE_HOURS - 1);

    // and the same trend rows and events, from a pass through the cache and from one without
    const passes = [];
    for (const drop of [false, true]) {
      await gw.deps.db.$pool.query(`DELETE FROM trends WHERE account_id = $1`, [a.accountId]);
      if (drop) await gw.deps.db.$pool.query(`DELETE FROM topic_series WHERE topic_id IN (SELECT id FROM topics WHERE account_id = $1)`, [a.accountId]);
      const { ms, ...stats } = await detectAccount(gw.deps, a.accountId, hoursFrom(NOW, 9), options); // ms: timings differ
      const trends = await gw.deps.db.trend.findMany({ where: { accountId: a.accountId }, orderBy: { topicId: "asc" } });
      passes.push({ stats, trends: trends.map(({ id, updatedAt, ...t }) => t) });
    }
    expect(passes[0]).toEqual(passes[1]);
  });

  test("a signal two hours late counts at the next pass", async () => {
    const a = await gw.account();
    await seed(a.accountId, NOW);
    await warm(a.accountId, NOW);
    const id = await topicId(a.accountId, "Cache A");
    const late = hoursFrom(NOW, -2);
    const before = yAt(await warm(a.accountId, hoursFrom(NOW, -0.5)), id, late); // a pass of the previous hour
    expect(before).toBeGreaterThan(1);
    await mention(a.accountId, "Cache A", late, 77);
    const after = await warm(a.accountId, NOW);
    expect(yAt(after, id, late)).toBe(before + 77);
    expect(view(after)).toEqual(view(await cold(a.accountId, NOW)));
  });

  test(`a signal more than ${LATE_HOURS} h late reaches the history at the rebuild, within ${SERIES_REBUILD_HOURS} h`, async () => {
    const a = await gw.account();
    await seed(a.accountId, NOW);
    await warm(a.accountId, NOW);
    const id = await topicId(a.accountId, "Cache B");
    const veryLate = hoursFrom(NOW, -31); // the outage hour: empty for every topic until now
    await mention(a.accountId, "Cache B", veryLate, 55);
    const next = await warm(a.accountId, hoursFrom(NOW, 0.2));
    expect(Number.isNaN(yAt(next, id, veryLate))).toBe(true); // still the cached outage: the documented trade-off

    const later = hoursFrom(NOW, SERIES_REBUILD_HOURS);
    for (const topic of TOPICS) await mention(a.accountId, topic, hoursFrom(later, -1), 100); // keeps them candidates
    const rebuilt = await warm(a.accountId, later);
    expect(yAt(rebuilt, id, veryLate)).toBe(56);
    expect(view(rebuilt)).toEqual(view(await cold(a.accountId, later)));
    const rows = await seriesRows(a.accountId);
    expect(rows.map((r) => r.built_at.getTime())).toEqual([later.getTime(), later.getTime(), later.getTime()]);
  });

  test("deleting topics deletes their cache", async () => {
    const a = await gw.account();
    await seed(a.accountId, NOW);
    await warm(a.accountId, NOW);
    expect(await seriesRows(a.accountId)).toHaveLength(3);
    const ids = (await gw.deps.db.$pool.query<{ id: string }>(`SELECT id FROM topics WHERE account_id = $1`, [a.accountId])).rows.map((r) => r.id);
    await gw.deps.db.$pool.query(`DELETE FROM topics WHERE account_id = $1 AND name = 'Cache A'`, [a.accountId]);
    expect(await seriesRows(a.accountId)).toHaveLength(2);
    await gw.deps.db.account.delete({ where: { id: a.accountId } });
    expect((await gw.deps.db.$pool.query(`SELECT 1 FROM topic_series WHERE topic_id = ANY($1)`, [ids])).rowCount).toBe(0);
  });
});
