import crypto from "node:crypto";
import { boundTrendEvent, clipText, QUEUES, TREND_EVENT_LIMITS, TrendEvent } from "@trendgate/contracts";
import { payloadFromEvent } from "@trendgate/webhooks";
import { DEFAULT_DETECTION_CONFIG, detectAccount, trendStreamKey } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import { onCleanup, runCleanups } from "../helpers/faults-proc-kit.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// Oversized trend text: a 10 MB summary was once delivered (25 s per attempt; Redis held 163 MB). A topic's name
// (from stored signals) is quoted in the trend's name and summary, and nothing downstream of the API bounded it.
// Now every event is held to TREND_EVENT_LIMITS where it is built (engine) and published, and every delivery body
// to DELIVERY_BODY_MAX_BYTES: text is cut with "…", an event is never refused.

const L = TREND_EVENT_LIMITS;
const BASE = "/api/integrations/webhooks";
const MB = 1024 * 1024;
afterEach(runCleanups);

const bytes = (v: unknown) => Buffer.byteLength(typeof v === "string" ? v : JSON.stringify(v));

// Only the delivery path runs: a scheduled detection pass (its first tick fires when the worker starts) would race the
// test's own detectAccount call for the trend it plants.
async function stack(env: Record<string, string> = {}): Promise<Stack> {
  const s = await startStack({ WORKER_QUEUES: `${QUEUES.trendEvents},${QUEUES.webhookDeliveries}`, ...env }, 1);
  onCleanup(() => s.close());
  return s;
}

async function receiver() {
  const r = await startReceiver();
  onCleanup(() => r.close());
  return r;
}

/** A new account with a webhook that fires for every newly detected trend. */
async function everyNewTrend(s: Stack, url: string) {
  const account = await s.gw.account("pro");
  const res = await s.gw.http.post(BASE).set(account.auth).send(webhookBody(url, { trigger_type: "trend_detected", threshold_value: 0 }));
  expect(res.status).toBe(201);
  return account;
}

function expectBounded(e: { trend_name: string; summary: string; recommended_next_steps: string[] }) {
  expect(e.trend_name.length).toBeLessThanOrEqual(L.trendName);
  expect(e.summary.length).toBeLessThanOrEqual(L.summary);
  expect(e.recommended_next_steps.length).toBeLessThanOrEqual(L.nextSteps);
  for (const step of e.recommended_next_steps) expect(step.length).toBeLessThanOrEqual(L.nextStep);
}

describe("the limits themselves", () => {
  test("documented numbers: name 200, summary 1,000, 10 steps of 300 characters, 64 KiB per event/body by default", () => {
    expect(L).toMatchObject({ trendName: 200, summary: 1000, nextSteps: 10, nextStep: 300, sourceLink: 2048, maxBytes: 65_536, minBytes: 16_384 });
  });

  test("a huge event is cut with an ellipsis, never refused, and fits the byte budget; a normal one is untouched", () => {
    const huge = trendEvent("acct_x", {
      trend_name: "N".repeat(MB), summary: "S".repeat(10 * MB),
      recommended_next_steps: Array.from({ length: 5000 }, (_, i) => `step ${i} ` + "x".repeat(10_000)),
    });
    const b = boundTrendEvent(huge);
    expect(TrendEvent.safeParse(b).success).toBe(true);
    expectBounded(b);
    expect(b.trend_name).toBe("N".repeat(L.trendName - 1) + "…");
    expect(b.summary.endsWith("…")).toBe(true);
    expect(b.recommended_next_steps[0].startsWith("step 0 ")).toBe(true);
    expect(bytes(b)).toBeLessThanOrEqual(L.maxBytes);

    const normal = trendEvent("acct_x");
    expect(boundTrendEvent(normal)).toBe(normal);
    expect(TrendEvent.safeParse(huge).success).toBe(false); // the contract states the bounds
  });

  test("text that serializes large (control characters escape to 6 bytes each) is shed to the configured budget", () => {
    const escaped = "\u0001".repeat(10_000);
    const e = trendEvent("acct_x", { trend_name: escaped, summary: escaped, recommended_next_steps: Array.from({ length: 20 }, () => escaped) });
    for (const budget of [L.minBytes, 32 * 1024, L.maxBytes]) {
      const b = boundTrendEvent(e, budget);
      expectBounded(b);
      expect(bytes(b)).toBeLessThanOrEqual(budget);
      expect(b.recommended_next_steps.length).toBeGreaterThanOrEqual(1);
    }
  });

  test("cuts never split a surrogate pair", () => {
    const clipped = clipText("😀".repeat(300), L.trendName);
    expect(clipped.length).toBeLessThanOrEqual(L.trendName);
    expect(clipped.isWellFormed()).toBe(true);
    expect(clipped.endsWith("…")).toBe(true);
  });

  test("a delivery body built from an unbounded event (a row stored by an older version) is capped too", () => {
    const body = JSON.stringify(payloadFromEvent(trendEvent("acct_x", { summary: "S".repeat(10 * MB), recommended_next_steps: Array.from({ length: 1000 }, () => "y".repeat(1000)) })));
    expect(bytes(body)).toBeLessThanOrEqual(L.maxBytes);
    expectBounded(JSON.parse(body));
  });
});

describe("end to end", () => {
  test("a published event with a 1 MB name, a 10 MB summary and 5,000 steps is stored, streamed and delivered capped", async () => {
    const r = await receiver();
    const s = await stack();
    const account = await everyNewTrend(s, r.url("/huge-event"));
    const event = trendEvent(account.accountId, {
      id: `evt_${crypto.randomUUID()}`, type: "trend.detected", previous_severity: null, previous_velocity: null,
      trend_name: "Huge " + "n".repeat(MB), summary: "s".repeat(10 * MB),
      recommended_next_steps: Array.from({ length: 5000 }, (_, i) => `${i} ` + "z".repeat(2000)),
    });
    expect(await s.publish(event)).toBe(true); // never refused

    const row = await s.gw.deps.db.trendEventRecord.findUnique({ where: { id: event.id } });
    expectBounded(row!.payload as TrendEvent);
    expect(bytes(row!.payload)).toBeLessThanOrEqual(L.maxBytes);
    const streamed = await s.gw.deps.queues.connection.xrange(trendStreamKey(s.gw.deps.queues.prefix, account.accountId), "-", "+");
    expect(streamed).toHaveLength(1);
    expect(bytes(streamed[0][1][1])).toBeLessThanOrEqual(L.maxBytes); // the live WebSocket message

    await waitFor(async () => r.on("/huge-event").length >= 1, { timeoutMs: 30_000 });
    const body = r.on("/huge-event")[0].body;
    expect(bytes(body)).toBeLessThanOrEqual(s.gw.deps.config.DELIVERY_BODY_MAX_BYTES);
    const delivered = JSON.parse(body);
    expectBounded(delivered);
    expect(delivered.trend_name.startsWith("Huge nnn")).toBe(true);
    expect(delivered.trend_name.endsWith("…")).toBe(true);
    expect(delivered.summary.endsWith("…")).toBe(true);
    expect(delivered.recommended_next_steps).toHaveLength(L.nextSteps);
  }, 60_000);

  test("a topic stored with a 200 KB name becomes a trend whose row, event and delivery body are capped", async () => {
    const r = await receiver();
    const s = await stack();
    const account = await everyNewTrend(s, r.url("/huge-topic"));
    const db = s.gw.deps.db;
    // A topic row as an older version (or any path that skipped the API's 200-character limit) could store it.
    const name = "Giant topic " + "g".repeat(200_000);
    const topicId = `top_${crypto.randomUUID().replace(/-/g, "")}`;
    await db.$pool.query(`INSERT INTO topics (id, account_id, key, name, category, created_at, last_seen_at) VALUES ($1, $2, $3, $4, 'tech/ai', now(), now())`,
      [topicId, account.accountId, `giant-${topicId}|tech/ai`, name]);
    const HOUR = 3600_000;
    const last = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
    for (let i = 0; i <= 24; i++) {
      await db.$pool.query(`INSERT INTO topic_buckets (topic_id, bucket_start, count, sentiment_sum, sentiment_count) VALUES ($1, $2, $3, 0, 0)`,
        [topicId, new Date(last - (24 - i) * HOUR), i === 24 ? 500 : 100]);
    }

    const stats = await detectAccount(s.gw.deps, account.accountId, new Date(), {
      ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example", velocityEventStep: 0.2, maxEventBytes: s.gw.deps.config.DELIVERY_BODY_MAX_BYTES,
    });
    expect(stats.events).toBe(1);

    const trend = await db.trend.findFirst({ where: { accountId: account.accountId } });
    expect(trend!.name.length).toBeLessThanOrEqual(L.trendName);
    const api = await s.gw.http.get(`/api/trends/${trend!.id}`).set(account.auth);
    expect(api.status).toBe(200);
    expect(api.body.name.length).toBeLessThanOrEqual(L.trendName);

    await waitFor(async () => r.on("/huge-topic").length >= 1, { timeoutMs: 30_000 });
    const body = r.on("/huge-topic")[0].body;
    expect(bytes(body)).toBeLessThan(4096); // a capped name quoted in a capped summary: small
    const delivered = JSON.parse(body);
    expectBounded(delivered);
    expect(delivered.trend_name).toBe(clipText(name, L.trendName));
    expect(delivered.summary).toContain(`"${clipText(name, L.trendName)}"`);
  }, 60_000);

  test("an unbounded event row left by an older version is re-queued by the sweeper and delivered capped", async () => {
    const r = await receiver();
    const s = await stack({ SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_SECONDS: "1" });
    const account = await everyNewTrend(s, r.url("/legacy-row"));
    const event = trendEvent(account.accountId, {
      id: `evt_${crypto.randomUUID()}`, type: "trend.detected", previous_severity: null, previous_velocity: null, summary: "L".repeat(5 * MB),
    });
    // Written straight to the outbox, as before the limits: no job, so only the sweeper can find it.
    await s.gw.deps.db.trendEventRecord.create({
      data: { id: event.id, accountId: account.accountId, type: event.type, trendId: event.trend_id, payload: event as object, createdAt: new Date(Date.now() - 60_000) },
    });
    await waitFor(async () => r.on("/legacy-row").length >= 1, { timeoutMs: 30_000 });
    const body = r.on("/legacy-row")[0].body;
    expect(bytes(body)).toBeLessThanOrEqual(L.maxBytes);
    expect(JSON.parse(body).summary).toBe(clipText(event.summary, L.summary));
  }, 60_000);
});
