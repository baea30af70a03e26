// Issue 8.4: a gateway killed (-9) while requests are in flight, some between their commit and their answer. Every
// client retries with the same Idempotency-Key against a fresh gateway: each key must have done its work exactly once,
// and the retry must answer with the same delivery id the first run created.
import http from "node:http";
import { createAccount, createApiKey, createDb, newId } from "@trendgate/db";
import { waitFor } from "../helpers/config.ts";
import { freePort } from "../helpers/free-port.ts";
import { spawnApp } from "../helpers/process.ts";


function post(port: number, path: string, key: string, idem: string) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method: "POST", agent: false, headers: { Authorization: `Bearer ${key}`, "Idempotency-Key": idem } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function startGateway(port: number, prefix: string) {
  const child = spawnApp("gateway", {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", QUEUE_PREFIX: prefix, IDEMPOTENCY_LOCK_SECONDS: "2", LOG_LEVEL: "silent" },
    stdio: "ignore",
  });
  await waitFor(() => new Promise<boolean>((r) => http.get(`http://127.0.0.1:${port}/status`, (res) => { res.resume(); r(res.statusCode === 200); }).on("error", () => r(false))), { timeoutMs: 20_000 });
  return child;
}

test("a gateway killed between commit and answer: every retried request replays, none runs twice", async () => {
  const db = createDb(process.env.DATABASE_URL!);
  const account = await createAccount(db, "crash");
  const { key } = await createApiKey(db, account.id, "k");
  const hook = await db.webhookSubscription.create({
    data: {
      id: newId("wh"), accountId: account.id, url: "https://hooks.example.com/crash", triggerType: "trend_detected", deliveryMode: "instant_stream",
      thresholdValue: 0, cooldownSeconds: 0, secretCiphertext: "v1.x.y.z", status: "paused", // paused: nothing is sent
    },
  });
  const port = await freePort();
  const prefix = `crash${port}`;
  const path = `/api/integrations/webhooks/${hook.id}/test`;
  const keys = Array.from({ length: 300 }, (_, i) => `crash-${i}`);

  // First gateway: fire every request at once, kill -9 once a few have been answered (the rest are mid-flight).
  const first = await startGateway(port, prefix);
  let answered = 0;
  const firstAnswers = new Map<string, string>();
  const inFlight = keys.map((k) => post(port, path, key, k).then((r) => {
    answered++;
    if (r.status === 202) firstAnswers.set(k, r.body.delivery_id);
  }, () => undefined));
  await waitFor(async () => answered >= 10, { timeoutMs: 20_000, everyMs: 1 });
  first.kill("SIGKILL");
  await Promise.all(inFlight);
  const committedBeforeRetry = await db.webhookDelivery.count({ where: { subscriptionId: hook.id, trigger: "test" } });
  expect(firstAnswers.size).toBeLessThan(keys.length); // the kill cut requests off: the test exercises the crash

  // Second gateway: every client retries with its key until it gets its answer (409 while a dead request's lock holds).
  const second = await startGateway(port, prefix);
  try {
    const retried = new Map<string, string>();
    for (const k of keys) {
      const r = await waitFor(async () => { const x = await post(port, path, key, k); return x.status === 409 ? null : x; }, { timeoutMs: 15_000, everyMs: 200 });
      expect(r.status).toBe(202);
      retried.set(k, r.body.delivery_id);
    }
    // A key answered before the kill replays that very delivery.
    for (const [k, id] of firstAnswers) expect(retried.get(k)).toBe(id);
    // Exactly one delivery per key: nothing committed before the kill ran again.
    const rows = await db.webhookDelivery.findMany({ where: { subscriptionId: hook.id, trigger: "test" }, select: { id: true } });
    expect(rows).toHaveLength(keys.length);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(retried.values()));
    expect(committedBeforeRetry).toBeGreaterThanOrEqual(firstAnswers.size);
  } finally {
    second.kill("SIGKILL");
    await db.$disconnect();
  }
}, 90_000);
