import { QUEUES } from "@trendgate/contracts";
import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startStack } from "../helpers/stack.ts";

const HOUR = 3600_000;
const lastCompleteBucket = () => new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example", velocityEventStep: 0.2 };

/** 24 flat hours of `flat` mentions, then `burst` mentions in the last complete hour. */
async function seedTopic(gw: TestGateway, accountId: string, topic: string, category: string, flat: number, burst: number) {
  const last = lastCompleteBucket().getTime();
  const signals = Array.from({ length: 25 }, (_, i) => {
    const at = new Date(last - (24 - i) * HOUR + 60_000);
    return signal({ id: `${topic}-${i}`, topic, category, count: i === 24 ? burst : flat, observed_at: at.toISOString(), sentiment: 0.5 });
  });
  expect(await insertSignals(gw.deps.db, accountId, signals)).toBe(25);
}
const eventsOf = (gw: TestGateway, accountId: string) => gw.deps.db.trendEventRecord.findMany({ where: { accountId }, orderBy: { createdAt: "asc" } });

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

describe("detection from stored signals", () => {
  test("a burst becomes one trend, published once however often (and however concurrently) detection runs", async () => {
    const a = await gw.account();
    await seedTopic(gw, a.accountId, "AI agents", "tech/ai", 100, 400);
    await seedTopic(gw, a.accountId, "Gardening", "home/garden", 100, 104);
    const runs = await Promise.all([1, 2, 3].map(() => detectAccount(gw.deps, a.accountId, new Date(), options)));
    expect(runs.reduce((n, r) => n + r.events, 0)).toBe(1);
    await detectAccount(gw.deps, a.accountId, new Date(), options);
    const events = await eventsOf(gw, a.accountId);
    expect(events.map((e) => e.type)).toEqual(["trend.detected"]);
    const e = events[0].payload as any;
    expect(e).toMatchObject({ trend_name: "AI agents", category: "tech/ai", previous_velocity: null, timestamp: lastCompleteBucket().toISOString() });
    expect(e.velocity).toBeCloseTo(300, -1); // mentions/h above a baseline of ~100/h
    expect(["high", "critical"]).toContain(e.severity);
    expect(e.summary).toMatch(/AI agents/);
    expect(e.source_link).toBe(`https://trendgate.example/api/trends/${e.trend_id}`);
    expect(e.recommended_next_steps.length).toBeGreaterThan(0);
    expect(await gw.deps.queues.get(QUEUES.trendEvents).getWaitingCount()).toBe(1);
  });

  test("shards together find what one pass finds, once", async () => {
    const a = await gw.account();
    const names = ["Shard A", "Shard B", "Shard C", "Shard D", "Shard E", "Shard F"];
    for (const n of names) await seedTopic(gw, a.accountId, n, "tech/shards", 100, 500);
    const parts = await Promise.all([0, 1, 2].map((index) => detectAccount(gw.deps, a.accountId, new Date(), options, { index, count: 3 })));
    expect(parts.reduce((n, p) => n + p.topics, 0)).toBe(names.length); // every topic in exactly one shard
    expect(parts.filter((p) => p.topics > 0).length).toBeGreaterThan(1); // and really split
    expect(parts.reduce((n, p) => n + p.events, 0)).toBe(names.length);
    expect((await detectAccount(gw.deps, a.accountId, new Date(), options)).events).toBe(0); // same changes: no new events
    expect((await eventsOf(gw, a.accountId)).map((e) => (e.payload as any).trend_name).sort()).toEqual(names);
  });

  test("a re-sent batch of signals does not count twice", async () => {
    const a = await gw.account();
    const s = signal({ id: "dup-1", count: 50, observed_at: lastCompleteBucket().toISOString() });
    await insertSignals(gw.deps.db, a.accountId, [s]);
    expect(await insertSignals(gw.deps.db, a.accountId, [s])).toBe(0);
    const buckets = await gw.deps.db.topicBucket.findMany({ where: { topic: { accountId: a.accountId } } });
    expect(buckets.map((b) => b.count)).toEqual([50]);
  });
});

describe("GET /api/trends and friends", () => {
  let a: Awaited<ReturnType<TestGateway["account"]>>;
  beforeAll(async () => {
    a = await gw.account();
    await seedTopic(gw, a.accountId, "LLM pricing", "tech/ai", 100, 500);
    await seedTopic(gw, a.accountId, "Quantum chips", "tech/hardware", 100, 260);
    await seedTopic(gw, a.accountId, "Sourdough", "food", 100, 900);
    await seedTopic(gw, a.accountId, "Knitting", "crafts", 100, 101);
    await detectAccount(gw.deps, a.accountId, new Date(), options);
  });

  test("lists active trends; category matches sub-categories; filters and sorting work", async () => {
    const all = (await gw.http.get("/api/trends").set(a.auth)).body.data;
    expect(all.map((t: any) => t.name).sort()).toEqual(["LLM pricing", "Quantum chips", "Sourdough"]);
    const tech = (await gw.http.get("/api/trends?category=tech").set(a.auth)).body.data;
    expect(tech.map((t: any) => t.name).sort()).toEqual(["LLM pricing", "Quantum chips"]);
    expect((await gw.http.get("/api/trends?category=te").set(a.auth)).body.data).toEqual([]);
    const fastest = (await gw.http.get("/api/trends?sort=velocity").set(a.auth)).body.data.map((t: any) => t.name);
    expect(fastest).toEqual(["Sourdough", "LLM pricing", "Quantum chips"]);
    const severities = new Set(all.map((t: any) => t.severity));
    for (const sev of severities) {
      const only = (await gw.http.get(`/api/trends?severity=${sev}`).set(a.auth)).body.data;
      expect(only.every((t: any) => t.severity === sev)).toBe(true);
    }
    expect(all[0]).toEqual(expect.objectContaining({ status: "active", stage: "emerging", summary: expect.any(String) }));
  });

  test("pages with a cursor in the chosen order", async () => {
    const p1 = await gw.http.get("/api/trends?sort=velocity&limit=2").set(a.auth);
    const p2 = await gw.http.get(`/api/trends?sort=velocity&limit=2&cursor=${p1.body.next_cursor}`).set(a.auth);
    expect([...p1.body.data, ...p2.body.data].map((t: any) => t.name)).toEqual(["Sourdough", "LLM pricing", "Quantum chips"]);
    expect(p2.body.next_cursor).toBeNull();
    expect((await gw.http.get("/api/trends?cursor=garbage").set(a.auth)).status).toBe(422);
  });

  test("one trend with its series; recommendations derived from current trends", async () => {
    const [t] = (await gw.http.get("/api/trends?category=food").set(a.auth)).body.data;
    const one = await gw.http.get(`/api/trends/${t.id}`).set(a.auth);
    expect(one.status).toBe(200);
    expect(one.body.series).toHaveLength(25);
    expect(one.body.series.at(-1)).toMatchObject({ count: 900, sentiment: 0.5 });
    const recs = (await gw.http.get("/api/intelligence/recommendations").set(a.auth)).body.data;
    // No workflow tool connected: not "push" (which would answer 409), but one hint to set the connector up.
    expect(recs.some((r: any) => r.action === "push_to_workflow")).toBe(false);
    expect(recs.filter((r: any) => r.action === "set_up_connector" && r.connector === "workflow")).toHaveLength(1);
    for (const r of recs) expect(r.confidence).toBeGreaterThan(0);
    expect([...recs].map((r: any) => r.confidence)).toEqual([...recs].map((r: any) => r.confidence).sort((x: number, y: number) => y - x));
  });

  test("bad filters answer 422 naming the parameter; another account sees nothing", async () => {
    const bad = await gw.http.get("/api/trends?severity=extreme&stage=hot").set(a.auth);
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["severity", "stage"]);
    const b = await gw.account();
    expect((await gw.http.get("/api/trends").set(b.auth)).body.data).toEqual([]);
    expect((await gw.http.get("/api/intelligence/recommendations").set(b.auth)).body.data).toEqual([]);
    const [t] = (await gw.http.get("/api/trends").set(a.auth)).body.data;
    expect((await gw.http.get(`/api/trends/${t.id}`).set(b.auth)).status).toBe(404);
  });
});

test("end to end: ingested signals become a trend event that reaches a subscribed webhook receiver", async () => {
  const stack = await startStack();
  const rx = await startReceiver();
  try {
    const acct = await stack.gw.account();
    const sub = await stack.gw.http.post("/api/integrations/webhooks").set(acct.auth).send({
      url: rx.url("/e2e"), trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0, category: "tech",
    });
    expect(sub.status).toBe(201);
    const last = lastCompleteBucket().getTime();
    const signals = Array.from({ length: 25 }, (_, i) => signal({ id: `e2e-${i}`, topic: "Edge AI", category: "tech/ai", count: i === 24 ? 600 : 100, observed_at: new Date(last - (24 - i) * HOUR + 1000).toISOString() }));
    expect((await stack.gw.http.post("/api/signals").set(acct.auth).send({ signals })).body.accepted).toBe(25);
    await waitFor(async () => (await stack.gw.deps.db.signal.count({ where: { accountId: acct.accountId } })) === 25);
    await stack.gw.deps.queues.add(QUEUES.trendDetection, { account_id: acct.accountId });
    const [got] = await waitFor(async () => rx.on("/e2e").length === 1 && rx.on("/e2e"), { timeoutMs: 15_000 });
    expect(JSON.parse(got.body)).toMatchObject({ trend_name: "Edge AI", category: "tech/ai" });
    expect(JSON.parse(got.body).velocity).toBeGreaterThan(400);
    // The person who gets the alert opens its source_link without an API key: the briefing page of that trend.
    const link = new URL(JSON.parse(got.body).source_link);
    expect(link.pathname).toMatch(/^\/briefings\//);
    const page = await stack.gw.http.get(link.pathname).set("accept", "text/html");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.text).toContain("Edge AI");
  } finally {
    await stack.close();
    await rx.close();
  }
});

test("the scheduler's tick splits a big account into shard jobs that workers run", async () => {
  const stack = await startStack({ DETECTION_SHARD_TOPICS: "100" }, 0);
  try {
    const acct = await stack.gw.account();
    const last = lastCompleteBucket().getTime();
    // 250 topics (3 shards of at most 100), one of them bursting.
    const signals = Array.from({ length: 250 }, (_, t) => Array.from({ length: 25 }, (_, i) => signal({
      id: `tick-${t}-${i}`, topic: `tick topic ${t}`, category: "tech/tick", count: t === 7 && i === 24 ? 600 : 100,
      observed_at: new Date(last - (24 - i) * HOUR + 1000).toISOString(),
    }))).flat();
    for (let i = 0; i < signals.length; i += 1000) await insertSignals(stack.gw.deps.db, acct.accountId, signals.slice(i, i + 1000));
    const q = stack.gw.deps.queues.get(QUEUES.trendDetection);
    const { startWorkers } = await import("../../apps/worker/src/run-workers.ts");
    const { createLogger } = await import("@trendgate/logger");
    await q.add(QUEUES.trendDetection, {}, { jobId: "tick-test" }); // what the job scheduler adds (it also ticks on start)
    stack.workers.push(startWorkers(stack.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.trendDetection]));
    const shardJobs = await waitFor(async () => {
      const done = (await q.getJobs(["completed"])).filter((j) => j.data.account_id === acct.accountId && j.id!.startsWith("tick-test"));
      return done.length === 3 && done;
    }, { timeoutMs: 30_000 });
    expect(shardJobs.map((j) => `${j.data.shard}/${j.data.shards}`).sort()).toEqual(["0/3", "1/3", "2/3"]);
    // Every topic in exactly one shard (a concurrent tick's shards may have taken the lock: they count the same topics).
    const topicsPerShard = await Promise.all([0, 1, 2].map(async (index) =>
      (await stack.gw.deps.db.$pool.query(`SELECT count(*)::int AS n FROM topics WHERE account_id = $1 AND mod(abs(hashtext(id)), 3) = $2`, [acct.accountId, index])).rows[0].n));
    expect(topicsPerShard.reduce((a: number, b: number) => a + b, 0)).toBe(250);
    expect(Math.max(...topicsPerShard)).toBeLessThan(250);
    // The shard that holds the burst may be run by the start-up tick's job, still writing when ours returned (the lock).
    const events = await waitFor(async () => { const ev = await eventsOf(stack.gw, acct.accountId); return ev.length > 0 && ev; });
    await new Promise((r) => setTimeout(r, 200));
    expect((await eventsOf(stack.gw, acct.accountId)).map((e) => (e.payload as any).trend_name)).toEqual(["tick topic 7"]);
    expect(events).toHaveLength(1);
  } finally {
    await stack.close();
  }
}, 60_000);
