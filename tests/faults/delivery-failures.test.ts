import crypto from "node:crypto";
import pg from "pg";
import { enqueueDeliveries, serializePayload, testPayload } from "@trendgate/webhooks";
import { newId, recordAttempts, type AttemptRecord } from "@trendgate/db";
import { publishTrendEvents } from "../../packages/trends/src/events/publish.ts";
import { waitFor } from "../helpers/config.ts";
import { trendEvent, type Stack } from "../helpers/stack.ts";
import { allExecutions, countBy, faultReceiver, runCleanups, stack, subscriptions, type FaultReceiver } from "../helpers/faults-kit.ts";

// Issue 8, item 1: many destinations failing at once. Every attempt the receivers saw must be in the attempt log
// exactly once, no attempt may be sent twice, and every delivery must end succeeded or failed. Before the fix the
// attempt batches deadlocked on the subscriptions' rows; a failed batch failed its jobs, which BullMQ retried
// (sending again), and final attempts whose record failed were never logged.

afterEach(runCleanups);

const FAST_RETRIES = {
  WEBHOOK_RETRY_SCHEDULE_SECONDS: "0.2,0.2,0.2,0.2,0.2,0.2", // 7 attempts, 0.2 s apart
  WEBHOOK_RETRY_JITTER: "0",
  WEBHOOK_SUBSCRIPTION_CACHE_MS: "2000", // the production default
  SWEEP_GRACE_SECONDS: "10", // the sweeper only steps in for jobs really lost
};

/**
 * Every delivery of `subIds` ended (succeeded or failed), and the attempt log (rows and API) matches what the
 * receiver saw: per delivery, one request and one execution per attempt number 1..attempts, nothing twice.
 */
async function expectEveryAttemptRecordedOnce(s: Stack, rx: FaultReceiver, auth: { Authorization: string }, subIds: string[], expectedDeliveries: number) {
  const db = s.gw.deps.db;
  const deliveries = await db.webhookDelivery.findMany({ where: { subscriptionId: { in: subIds } } });
  expect(deliveries).toHaveLength(expectedDeliveries);
  expect(deliveries.filter((d) => d.status !== "succeeded" && d.status !== "failed")).toEqual([]);

  const ours = new Set(deliveries.map((d) => d.id));
  const sent = rx.requests.filter((r) => ours.has(r.webhookId));
  const executions = await db.webhookExecution.findMany({ where: { subscriptionId: { in: subIds } }, select: { deliveryId: true, attempt: true, outcome: true, errorClass: true } });

  const requestsPer = countBy(sent.map((r) => r.webhookId));
  const attemptsPer = new Map<string, typeof executions>();
  for (const e of executions) (attemptsPer.get(e.deliveryId) ?? attemptsPer.set(e.deliveryId, []).get(e.deliveryId)!).push(e);
  const mismatched = deliveries.filter((d) => {
    const attempts = (attemptsPer.get(d.id) ?? []).map((e) => e.attempt).sort((a, b) => a - b);
    return requestsPer.get(d.id) !== d.attempts || attempts.join(",") !== Array.from({ length: d.attempts }, (_, i) => i + 1).join(",");
  });
  // Each mismatch with what was recorded for it (attempt, outcome, error class), so a failure says which kind it is.
  expect(mismatched.map((d) => ({ id: d.id, attempts: d.attempts, requests: requestsPer.get(d.id),
    recorded: attemptsPer.get(d.id)?.map((e) => `${e.attempt} ${e.outcome} ${e.errorClass ?? ""}`.trim()) }))).toEqual([]);
  expect(executions.length).toBe(sent.length);

  // What the owner sees: the executions list of each webhook has every attempt its endpoint received.
  let listed = 0;
  for (const id of subIds) listed += (await allExecutions(s, auth, id)).length;
  expect(listed).toBe(sent.length);
}

test("30 % of attempts failing across 40 subscriptions and 3 workers: every attempt recorded once, none sent twice", async () => {
  const rx = await faultReceiver(() => (Math.random() < 0.3 ? { status: 500 } : { status: 204 }));
  const s = await stack(FAST_RETRIES, 3); // three worker sets on one queue prefix: three batch writers, 150 slots
  const accounts = [];
  for (let a = 0; a < 4; a++) accounts.push(await subscriptions(s, Array.from({ length: 10 }, (_, i) => rx.url(`/a${a}/s${i}`))));

  // 50 events per account, each firing all 10 of the account's subscriptions: 2,000 deliveries.
  for (const { account } of accounts) {
    for (let b = 0; b < 5; b++)
      await publishTrendEvents(s.gw.deps, Array.from({ length: 10 }, () => trendEvent(account.accountId, { id: `evt_${crypto.randomUUID()}`, velocity: 150, previous_velocity: 50 })));
  }
  const db = s.gw.deps.db;
  const subIds = accounts.flatMap((a) => a.ids);
  await waitFor(async () =>
    (await db.webhookDelivery.count({ where: { subscriptionId: { in: subIds } } })) === 2000 &&
    (await db.webhookDelivery.count({ where: { subscriptionId: { in: subIds }, status: "pending" } })) === 0,
  { timeoutMs: 40_000, everyMs: 250 });
  // A final attempt's record lands just after its job completes.
  await waitFor(async () => (await db.webhookExecution.count({ where: { subscriptionId: { in: subIds } } })) >= rx.requests.length, { timeoutMs: 10_000 });

  expect(rx.requests.filter((r) => r.status === 500).length).toBeGreaterThan(300); // the faults really happened
  for (const { account, ids } of accounts) await expectEveryAttemptRecordedOnce(s, rx, account.auth, ids, 500);
}, 90_000);

test("Postgres connections cut while attempts are being recorded: no attempt lost, none sent twice", async () => {
  const rx = await faultReceiver(() => (Math.random() < 0.2 ? { status: 503 } : { status: 204 }));
  // This stack's connections carry their own application_name, so the cuts reach them only: other suites share the
  // database in a parallel run.
  const appName = `tg_cut_${crypto.randomUUID().slice(0, 8)}`;
  const url = new URL(process.env.DATABASE_URL!);
  url.searchParams.set("application_name", appName);
  const s = await stack({ ...FAST_RETRIES, DATABASE_URL: url.toString() }, 2);
  expect(s.gw.deps.config.DATABASE_URL).toContain(appName);
  const { account, ids } = await subscriptions(s, Array.from({ length: 10 }, (_, i) => rx.url(`/cut/s${i}`)));
  const db = s.gw.deps.db;
  const body = serializePayload(testPayload({ id: ids[0], createdAt: new Date("2026-11-23T00:00:00Z"), thresholdValue: 100 }, "http://localhost:3000"));
  const deliveryIds = Array.from({ length: 1000 }, () => newId("msg"));
  await db.webhookDelivery.createMany({
    data: deliveryIds.map((id, i) => ({ id, accountId: account.accountId, subscriptionId: ids[i % 10], trigger: "test", payload: JSON.parse(body), nextAttemptAt: new Date() })),
  });

  // From here on, the test talks to Postgres only through this connection (every other one gets cut).
  const admin = new pg.Client({ connectionString: s.gw.deps.config.DATABASE_URL });
  await admin.connect();
  // Established connections only (a second old): node-postgres cannot survive a termination that arrives in the same
  // read as the end of its start-up handshake (pg-pool hands the client out with no 'error' listener attached).
  const cut = async () => (await admin.query(
    `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
        AND application_name = $1 AND backend_start < now() - interval '1 second'`, [appName])).rows[0].n;
  const finished = async () => Number((await admin.query(
    "SELECT count(*) AS n FROM webhook_deliveries WHERE subscription_id = ANY($1) AND status <> 'pending'", [ids])).rows[0].n);

  await enqueueDeliveries(s.gw.deps.queues, deliveryIds.map((id, i) => ({ job: { delivery_id: id, webhook_id: ids[i % 10], attempt: 1, trigger: "test" as const, body }, delayMs: 0 })));
  let cuts = 0;
  await waitFor(async () => rx.requests.length >= 50, { timeoutMs: 20_000, everyMs: 10 }); // deliveries are flowing
  const until = Date.now() + 4000;
  while (Date.now() < until && (await finished()) < 1000) { // cut the connections every 100-250 ms for 4 s
    cuts += Number(await cut());
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 150));
  }
  expect(cuts).toBeGreaterThan(5); // connections were really cut (every pool's, several times)

  await waitFor(async () => (await finished()) === 1000, { timeoutMs: 40_000, everyMs: 250 });
  await waitFor(async () => Number((await admin.query("SELECT count(*) AS n FROM webhook_executions WHERE subscription_id = ANY($1)", [ids])).rows[0].n) >= rx.requests.length, { timeoutMs: 10_000 });
  await admin.end();
  await expectEveryAttemptRecordedOnce(s, rx, account.auth, ids, 1000);
}, 90_000);

test("attempt batches written at once over the same subscriptions never deadlock, and every attempt is recorded", async () => {
  // What the workers' batch writers do when many endpoints fail at once, made dense: 8 batches at a time, 25 times,
  // each with 50 attempts over a random half of 100 subscriptions, 30 % of them failed, so every batch changes the
  // failing state of subscriptions that other batches are changing too. One subscription answers 410 once.
  const s = await stack({}, 0);
  const db = s.gw.deps.db;
  const { accountId } = await s.gw.account();
  const subs = Array.from({ length: 100 }, () => newId("wh"));
  await db.webhookSubscription.createMany({ data: subs.map((id, i) => ({
    id, accountId, url: `https://hooks.example.com/${i}`, triggerType: "trend_velocity", deliveryMode: "instant_stream", thresholdValue: 100,
    cooldownSeconds: 0, secretCiphertext: "sealed", failingSince: i % 2 ? new Date() : null,
  })) });
  const attempt = (sub: string, gone = false): AttemptRecord => {
    const ok = !gone && Math.random() < 0.7;
    return {
      execution: {
        id: newId("exe"), accountId, subscriptionId: sub, deliveryId: newId("msg"), attempt: 1, trigger: "trend_event", outcome: ok ? "succeeded" : gone ? "failed" : "retrying",
        // The URL each attempt went to: the subscription's own (a 410 disables only the URL that answered).
        requestUrl: `https://hooks.example.com/${subs.indexOf(sub)}`, requestHeaders: {}, requestBodyBytes: 100, responseStatus: ok ? 204 : gone ? 410 : 500, responseBody: "",
        responseBodyTruncated: false, durationMs: 3, errorClass: ok ? null : gone ? "http_410" : "http_5xx", errorMessage: ok ? null : "HTTP 500", nextRetryAt: null,
      },
      delivery: { status: ok ? "succeeded" : gone ? "failed" : "pending", attempts: 1, nextAttemptAt: new Date(), lastError: null },
      ...(gone ? { disableReason: "the endpoint answered 410 Gone" } : {}),
    };
  };
  const shuffled = () => [...subs].sort(() => Math.random() - 0.5);
  const outcomes: PromiseSettledResult<unknown>[] = [];
  for (let round = 0; round < 25; round++) {
    const batches = Array.from({ length: 8 }, (_, b) => shuffled().slice(0, 50).map((sub) => attempt(sub)).concat(round === 3 && b === 0 ? [attempt(subs[0], true)] : []));
    outcomes.push(...await Promise.allSettled(batches.map((batch) => recordAttempts(db, batch, 5 * 86_400))));
  }
  expect(outcomes.filter((o) => o.status === "rejected").map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
  expect(await db.webhookExecution.count({ where: { accountId } })).toBe(25 * 8 * 50 + 1);
  // The 410 disabled its subscription once, with one event; the others are still active.
  expect(await db.webhookSubscription.count({ where: { accountId, status: "disabled" } })).toBe(1);
  expect((await db.webhookSubscription.findUnique({ where: { id: subs[0] } }))?.status).toBe("disabled");
  expect(await db.accountEvent.count({ where: { accountId, type: "webhook.disabled" } })).toBe(1);
}, 60_000);
