import { QUEUES } from "@trendgate/contracts";
import { storeSignals } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { startWorkers, type RunningWorkers } from "../../apps/worker/src/run-workers.ts";
import { REJECTION_EVENTS_MAX } from "../../apps/worker/src/processors/signals-ingest.ts";
import { SignalBatcher } from "../../apps/worker/src/processors/signal-batcher.ts";
import { catalogProblemsOf } from "../helpers/account-events.ts";
import { waitFor } from "../helpers/config.ts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
let workers: RunningWorkers;
beforeAll(async () => {
  gw = await startGateway();
  workers = startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["signals-ingest"]);
});
afterAll(async () => { await workers.close(); await gw.close(); });

type Account = Awaited<ReturnType<TestGateway["account"]>>;
const storedIds = async (accountId: string) =>
  (await gw.deps.db.signal.findMany({ where: { accountId }, orderBy: { externalId: "asc" } })).map((r) => r.externalId);
const bucketTotal = async (accountId: string) => {
  const { rows } = await gw.deps.db.$pool.query<{ total: number | null }>(
    "SELECT sum(b.count)::float8 AS total FROM topic_buckets b JOIN topics t ON t.id = b.topic_id WHERE t.account_id = $1", [accountId]);
  return Number(rows[0].total ?? 0);
};
const events = async (a: Account, type: string) => {
  const res = await gw.http.get(`/api/events?type=${type}&limit=200`).set(a.auth);
  expect(res.status).toBe(200);
  expect(catalogProblemsOf(res.body.data)).toEqual([]); // each exactly its type's schema
  return res.body.data as { id: string; type: string; data: Record<string, any>; created_at: string }[];
};
/** Puts a job on the ingest queue directly, as a producer other than the gateway (or an older gateway) could. */
const enqueue = async (data: unknown, opts: Record<string, unknown> = {}) => {
  const jobId = `batch_test${Math.random().toString(36).slice(2)}`;
  await gw.deps.queues.get(QUEUES.signals).add(QUEUES.signals, data, { jobId, ...opts });
  return jobId;
};
const jobState = async (jobId: string) => (await gw.deps.queues.get(QUEUES.signals).getJob(jobId))?.getState();
const finished = (jobId: string) => waitFor(async () => { const s = await jobState(jobId); return s === "completed" || s === "failed" ? s : null; });

test("ingested signals are stored by a worker; re-sent signals are not stored twice", async () => {
  const a = await gw.account();
  const batch = [signal({ id: "w-1", count: 5 }), signal({ id: "w-2", count: 7, sentiment: 0.4, link: "https://example.com/p" })];
  expect((await gw.http.post("/api/signals").set(a.auth).send({ signals: batch })).status).toBe(202);
  await waitFor(async () => (await gw.deps.db.signal.count({ where: { accountId: a.accountId } })) === 2);
  expect((await gw.http.post("/api/signals").set(a.auth).send({ signals: [batch[0], signal({ id: "w-3" })] })).status).toBe(202);
  await waitFor(async () => (await gw.deps.db.signal.count({ where: { accountId: a.accountId } })) === 3);
  const rows = await gw.deps.db.signal.findMany({ where: { accountId: a.accountId }, orderBy: { externalId: "asc" } });
  expect(rows.map((r) => [r.externalId, r.count])).toEqual([["w-1", 5], ["w-2", 7], ["w-3", 12]]);
  expect(rows[1].sentiment).toBeCloseTo(0.4);
});

test("a worker started for an unknown queue refuses with the list of known queues", () => {
  expect(() => startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["nope"])).toThrow(/Unknown queue\(s\): nope. Known: signals-ingest/);
});

describe("a poison item never takes its batch down", () => {
  test.each([
    ["a NUL character in its topic", { topic: "AI\u0000agents" }, "nul_character"],
    ["year 0000", { observed_at: "0000-01-01T00:00:00Z" }, "date_out_of_range"],
    ["an unpaired surrogate in its id", { id: "p-\uD800" }, "invalid_unicode"],
    ["a NUL character in its id (quoted in the event as U+FFFD)", { id: "p-\u0000" }, "nul_character"],
  ])("3 good signals + 1 with %s: the 3 are stored, the 4th is a signals.rejected event", async (_, poison, code) => {
    const a = await gw.account();
    const signals = [signal({ id: "g-1", count: 1 }), signal({ id: "g-2", count: 2 }), signal({ id: "p-1", count: 100, ...poison }), signal({ id: "g-3", count: 4 })];
    const jobId = await enqueue({ account_id: a.accountId, batch_id: jobId_("poison"), signals });
    expect(await finished(jobId)).toBe("completed");
    expect(await storedIds(a.accountId)).toEqual(["g-1", "g-2", "g-3"]);
    expect(await bucketTotal(a.accountId)).toBe(7);
    const rejected = await events(a, "signals.rejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0].data).toMatchObject({ batch_id: expect.stringMatching(/^batch_poison/), index: 2, source: "x", batch_rejected: 1 });
    // Whichever layer of the worker catches it first: the Signal schema ("invalid") or the storage checks.
    expect(["invalid", code]).toContain(rejected[0].data.code);
    expect(rejected[0].data.reason).toEqual(expect.any(String));
    expect(Object.values(rejected[0].data).some((v) => typeof v === "string" && /\u0000|[\uD800-\uDFFF]/.test(v))).toBe(false);
  });

  test("the gateway itself refuses values the database cannot store, listing them as rejections", async () => {
    const a = await gw.account();
    const res = await gw.http.post("/api/signals").set(a.auth).send({
      signals: [signal({ id: "ok" }), signal({ id: "nul", topic: "a\u0000b" }), signal({ id: "y0", observed_at: "0000-01-01T00:00:00Z" })],
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 1, rejected: 2, duplicates: 0, rejections_truncated: false });
    expect(res.body.rejections.map((r: any) => [r.index, r.id, r.errors[0].path])).toEqual([[1, "nul", "topic"], [2, "y0", "observed_at"]]);
    await waitFor(async () => (await storedIds(a.accountId)).length === 1);
  });

  test("a value only Postgres refuses is isolated by bisection: the good ones are stored, counted once on a retry", async () => {
    const a = await gw.account();
    // storeSignals trusts its input (no pre-checks), so these reach Postgres and fail there (22021, 22008).
    const items = Array.from({ length: 16 }, (_, i) => signal({ id: `b-${String(i).padStart(2, "0")}`, count: 1 }));
    items[3] = { ...items[3], topic: "bad\u0000topic" };
    items[11] = { ...items[11], observed_at: "0000-06-01T00:00:00Z" };
    const batch = items.map((s, index) => ({ index: index + 100, signal: s as any }));
    const first = await storeSignals(gw.deps.db, a.accountId, batch);
    expect(first.inserted).toBe(14);
    expect(first.rejections.map((r) => [r.index, r.id, r.code])).toEqual([[103, "b-03", "invalid_text"], [111, "b-11", "date_out_of_range"]]);
    expect(first.statements).toBeLessThanOrEqual(1 + 2 * 2 * Math.ceil(Math.log2(16)));
    expect(await bucketTotal(a.accountId)).toBe(14);
    const again = await storeSignals(gw.deps.db, a.accountId, batch);
    expect(again.inserted).toBe(0);
    expect(again.rejections).toHaveLength(2);
    expect(await bucketTotal(a.accountId)).toBe(14);
  });

  test("a worker bisects when the batch statement fails with a data error, and tells the account once even when retried", async () => {
    const a = await gw.account();
    // A real Postgres data error (22021) for one topic, raised by a trigger: the worker's pre-checks cannot see it.
    const fn = `tg_test_poison_${Math.random().toString(36).slice(2, 8)}`;
    await gw.deps.db.$pool.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.topic = 'db-poison' THEN RAISE EXCEPTION 'poison' USING ERRCODE = '22021'; END IF; RETURN NEW; END $$`);
    await gw.deps.db.$pool.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON signals FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      const signals = [signal({ id: "d-1", count: 1 }), signal({ id: "d-2", topic: "db-poison" }), signal({ id: "d-3", count: 2 })];
      const data = { account_id: a.accountId, batch_id: jobId_("bisect"), signals, indexes: [0, 4, 5] }; // the request's indexes
      expect(await finished(await enqueue(data))).toBe("completed");
      // The same batch again (as a retry after a crash would): nothing is counted or told twice.
      expect(await finished(await enqueue(data))).toBe("completed");
      expect(await storedIds(a.accountId)).toEqual(["d-1", "d-3"]);
      expect(await bucketTotal(a.accountId)).toBe(3);
      const rejected = await events(a, "signals.rejected");
      expect(rejected.map((e) => [e.data.index, e.data.id, e.data.code])).toEqual([[4, "d-2", "invalid_text"]]);
    } finally {
      await gw.deps.db.$pool.query(`DROP TRIGGER IF EXISTS ${fn} ON signals`);
      await gw.deps.db.$pool.query(`DROP FUNCTION IF EXISTS ${fn}()`);
    }
  });

  test(`at most ${REJECTION_EVENTS_MAX} rejection events per batch, each with the batch's total`, async () => {
    const a = await gw.account();
    const signals = Array.from({ length: 150 }, (_, i) => signal({ id: `n-${i}`, topic: "x\u0000y" }));
    expect(await finished(await enqueue({ account_id: a.accountId, batch_id: jobId_("many"), signals: [...signals, signal({ id: "fine" })] }))).toBe("completed");
    expect(await storedIds(a.accountId)).toEqual(["fine"]);
    const rejected = await events(a, "signals.rejected");
    expect(rejected).toHaveLength(REJECTION_EVENTS_MAX);
    expect(new Set(rejected.map((e) => e.data.batch_rejected))).toEqual(new Set([150]));
  });
});

describe("a failed ingest job is visible in /api/events", () => {
  test("a payload that cannot be parsed fails at once with signals.ingest_failed", async () => {
    const a = await gw.account();
    const jobId = await enqueue({ account_id: a.accountId, batch_id: "batch_unparseable", signals: "not a list" });
    expect(await finished(jobId)).toBe("failed");
    const job = await gw.deps.queues.get(QUEUES.signals).getJob(jobId);
    expect(job?.attemptsMade).toBe(1); // not retried: retrying cannot help
    const failed = await events(a, "signals.ingest_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0].data).toMatchObject({ batch_id: "batch_unparseable", code: "invalid_payload", signals: null, attempts: 1 });
  });

  test("a batch that keeps failing is retried, and its last failed attempt records signals.ingest_failed", async () => {
    const a = await gw.account();
    // A transient-class error (40001, serialization failure) on every attempt, raised by Postgres itself.
    const fn = `tg_test_transient_${Math.random().toString(36).slice(2, 8)}`;
    await gw.deps.db.$pool.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.topic = 'always-busy' THEN RAISE EXCEPTION 'busy' USING ERRCODE = '40001'; END IF; RETURN NEW; END $$`);
    await gw.deps.db.$pool.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON signals FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      const signals = [signal({ id: "t-1", topic: "always-busy" }), signal({ id: "t-2", topic: "always-busy" })];
      const jobId = await enqueue({ account_id: a.accountId, batch_id: "batch_transient", signals }, { attempts: 3, backoff: { type: "fixed", delay: 50 } });
      expect(await finished(jobId)).toBe("failed");
      expect((await gw.deps.queues.get(QUEUES.signals).getJob(jobId))?.attemptsMade).toBe(3);
      const failed = await events(a, "signals.ingest_failed");
      expect(failed).toHaveLength(1); // told once, on the last attempt, not on each
      expect(failed[0].data).toMatchObject({ batch_id: "batch_transient", code: "storage_failed", signals: 2, attempts: 3 });
      expect(await events(a, "signals.rejected")).toEqual([]); // a transient error rejects nothing
    } finally {
      await gw.deps.db.$pool.query(`DROP TRIGGER IF EXISTS ${fn} ON signals`);
      await gw.deps.db.$pool.query(`DROP FUNCTION IF EXISTS ${fn}()`);
    }
  });
});

describe("batch bookkeeping at the gateway", () => {
  test("the same (source, id) twice in one batch counts as one, in the answer and in the buckets", async () => {
    const a = await gw.account();
    const res = await gw.http.post("/api/signals").set(a.auth).send({
      signals: [signal({ id: "dup", count: 5 }), signal({ id: "dup", count: 50 }), signal({ id: "dup", source: "reddit", count: 7 }), signal({ id: "other", count: 1 })],
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 3, rejected: 0, rejections: [], duplicates: 1, rejections_truncated: false });
    await waitFor(async () => (await storedIds(a.accountId)).length === 3);
    expect(await bucketTotal(a.accountId)).toBe(13);
  });

  test("the worker also counts a repeated (source, id) once when a job carries it", async () => {
    const a = await gw.account();
    const signals = [signal({ id: "r", count: 5 }), signal({ id: "r", count: 5 }), signal({ id: "s", count: 1 })];
    const jobId = await enqueue({ account_id: a.accountId, batch_id: jobId_("repeat"), signals });
    expect(await finished(jobId)).toBe("completed");
    expect((await gw.deps.queues.get(QUEUES.signals).getJob(jobId))?.returnvalue).toMatchObject({ inserted: 2, duplicates: 1, repeated_in_batch: 1, rejected: 0 });
    expect(await bucketTotal(a.accountId)).toBe(6);
  });

  test("an all-rejected batch of 1,000 items with 200-char ids answers a bounded response", async () => {
    const a = await gw.account();
    const signals = Array.from({ length: 1000 }, (_, i) => signal({ id: String(i).padStart(200, "i"), count: -1 }));
    const res = await gw.http.post("/api/signals").set(a.auth).send({ signals });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 0, rejected: 1000, duplicates: 0, rejections_truncated: true });
    expect(res.body.rejections).toHaveLength(100);
    expect(res.body.rejections[99]).toMatchObject({ index: 99, id: "99".padStart(200, "i") });
    expect(Buffer.byteLength(res.text)).toBeLessThan(64 * 1024);
    expect(await gw.deps.queues.get(QUEUES.signals).getJob(res.body.batch_id)).toBeUndefined(); // nothing to queue
  });

  test("echoed ids, paths and messages are clipped, however large the item", async () => {
    const a = await gw.account();
    const huge = "k".repeat(100_000);
    const res = await gw.http.post("/api/signals").set(a.auth).send({ signals: [{ ...signal({ id: "z".repeat(50_000) }), [huge]: 1, [`${huge}2`]: 2 }] });
    expect(res.status).toBe(202);
    expect(res.body.rejected).toBe(1);
    const [r] = res.body.rejections;
    expect(r.id.length).toBeLessThanOrEqual(200);
    for (const e of r.errors) { expect(e.path.length).toBeLessThanOrEqual(100); expect(e.message.length).toBeLessThanOrEqual(200); }
    expect(Buffer.byteLength(res.text)).toBeLessThan(4 * 1024);
  });
});

describe("signals batched across jobs", () => {
  type Sig = ReturnType<typeof signal>;
  const items = (signals: Sig[]) => signals.map((s, index) => ({ index, signal: s as any }));
  /** Job k of an account: 20 signals, the last 10 repeated as the first 10 of job k + 1; counts are the id numbers. */
  const overlapping = (k: number) => Array.from({ length: 20 }, (_, i) => signal({ id: `m-${String(k * 10 + i).padStart(4, "0")}`, count: k * 10 + i, topic: `topic ${i % 3}` }));
  const uniqueTotal = (jobs: number) => { let t = 0; for (let n = 0; n < jobs * 10 + 10; n++) t += n; return t; };
  const statementsOf = async (accountIds: string[]) => Number((await gw.deps.db.$pool.query(
    "SELECT count(DISTINCT created_at)::int AS n FROM signals WHERE account_id = ANY($1)", [accountIds])).rows[0].n); // now(): one per transaction

  test("merged batches from several jobs and accounts store every signal exactly once, in one statement", async () => {
    const accounts = [await gw.account(), await gw.account(), await gw.account()];
    const batcher = new SignalBatcher(gw.deps.db, { maxSignals: 10_000, maxInFlight: 1, bucketSeconds: 3600 });
    // All handed over in one turn of the event loop, as a worker running many jobs does: one statement.
    const results = await Promise.all(accounts.flatMap((a) => Array.from({ length: 4 }, (_, k) => batcher.store(a.accountId, items(overlapping(k))))));
    expect(await statementsOf(accounts.map((a) => a.accountId))).toBe(1);
    // Each account: 50 distinct signals; job 0 stores its 20, each later job only its 10 new ones.
    expect(results.map((r) => r.inserted)).toEqual([20, 10, 10, 10, 20, 10, 10, 10, 20, 10, 10, 10]);
    for (const a of accounts) {
      expect(await storedIds(a.accountId)).toHaveLength(50);
      expect(await bucketTotal(a.accountId)).toBe(uniqueTotal(4));
    }
    // The same jobs again (a retry): nothing new, nothing counted twice.
    const again = await Promise.all(accounts.flatMap((a) => Array.from({ length: 4 }, (_, k) => batcher.store(a.accountId, items(overlapping(k))))));
    expect(again.map((r) => r.inserted)).toEqual(Array(12).fill(0));
    for (const a of accounts) expect(await bucketTotal(a.accountId)).toBe(uniqueTotal(4));
  });

  test("jobs queued together through the worker are each stored exactly once", async () => {
    const accounts = [await gw.account(), await gw.account()];
    const jobs = accounts.flatMap((a) => Array.from({ length: 15 }, (_, k) => ({
      name: QUEUES.signals, data: { account_id: a.accountId, batch_id: jobId_("merge"), signals: overlapping(k) }, opts: { jobId: jobId_("merge") },
    })));
    await gw.deps.queues.get(QUEUES.signals).addBulk(jobs);
    for (const j of jobs) expect(await finished(j.opts.jobId)).toBe("completed");
    const done = await Promise.all(jobs.map(async (j) => (await gw.deps.queues.get(QUEUES.signals).getJob(j.opts.jobId))!.returnvalue));
    for (const [i, a] of accounts.entries()) {
      expect(await storedIds(a.accountId)).toHaveLength(160);
      expect(await bucketTotal(a.accountId)).toBe(uniqueTotal(15));
      const mine = done.slice(i * 15, i * 15 + 15);
      expect(mine.reduce((t, r) => t + r.inserted, 0)).toBe(160);
      expect(mine.reduce((t, r) => t + r.inserted + r.duplicates, 0)).toBe(15 * 20);
    }
  });

  test("a poison item in one job of a merged statement costs no other job a signal", async () => {
    const [a, b, gone] = [await gw.account(), await gw.account(), await gw.account()];
    await gw.deps.db.account.delete({ where: { id: gone.accountId } }); // 23503 for its rows: one account's problem
    const batcher = new SignalBatcher(gw.deps.db, { maxSignals: 10_000, maxInFlight: 1, bucketSeconds: 3600 });
    const poisoned = [signal({ id: "pa-1", count: 1 }), signal({ id: "pa-2", count: 100, topic: "bad\u0000topic" }), signal({ id: "pa-3", count: 2 })];
    const [ra, rb, rgone] = await Promise.allSettled([
      batcher.store(a.accountId, items(poisoned)),
      batcher.store(b.accountId, items([signal({ id: "pb-1", count: 4 }), signal({ id: "pb-2", count: 8 })])),
      batcher.store(gone.accountId, items([signal({ id: "pg-1" })])),
    ]);
    expect(ra).toMatchObject({ status: "fulfilled", value: { inserted: 2, rejections: [{ index: 1, id: "pa-2", code: "invalid_text" }] } });
    expect(rb).toMatchObject({ status: "fulfilled", value: { inserted: 2, rejections: [] } });
    expect(rgone).toMatchObject({ status: "rejected", reason: { code: "23503" } });
    expect(await storedIds(a.accountId)).toEqual(["pa-1", "pa-3"]);
    expect(await bucketTotal(a.accountId)).toBe(3);
    expect(await storedIds(b.accountId)).toEqual(["pb-1", "pb-2"]);
    expect(await bucketTotal(b.accountId)).toBe(12);
  });

  test("two workers running the same duplicated jobs at once count every signal once", async () => {
    const second = startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["signals-ingest"]);
    try {
      const accounts = [await gw.account(), await gw.account()];
      // Every batch twice under two job ids (a producer that re-sent without an idempotency key), accounts interleaved
      // and in opposite orders, so both workers merge the same rows into different statements at the same time.
      const batches = accounts.flatMap((a) => Array.from({ length: 20 }, (_, k) => ({ account_id: a.accountId, signals: overlapping(k) })));
      const jobs = [...batches, ...[...batches].reverse()].map((d) => ({ name: QUEUES.signals, data: { ...d, batch_id: jobId_("dup") }, opts: { jobId: jobId_("dup") } }));
      await gw.deps.queues.get(QUEUES.signals).addBulk(jobs);
      for (const j of jobs) expect(await finished(j.opts.jobId)).toBe("completed");
      const done = await Promise.all(jobs.map(async (j) => (await gw.deps.queues.get(QUEUES.signals).getJob(j.opts.jobId))!.returnvalue));
      for (const a of accounts) {
        expect(await storedIds(a.accountId)).toHaveLength(210);
        expect(await bucketTotal(a.accountId)).toBe(uniqueTotal(20));
        const mine = done.filter((_, i) => jobs[i].data.account_id === a.accountId);
        expect(mine.reduce((t, r) => t + r.inserted, 0)).toBe(210); // each new signal counted by exactly one job
      }
    } finally {
      await second.close();
    }
  });
});

function jobId_(tag: string) {
  return `batch_${tag}${Math.random().toString(36).slice(2)}`;
}
