// The n8n workflow connector end to end: gateway routes and the workflow-pushes worker against a local server that
// speaks n8n's public API v1 and its production webhook URLs (tests/peers/n8n-server.ts).
import { createServer } from "node:net";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { QUEUES, WorkflowPushSent } from "@trendgate/contracts";
import { catalogProblemsOf } from "../helpers/account-events.ts";
import { waitFor } from "../helpers/config.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";
import { startN8nServer, type N8nServer } from "../peers/n8n-server.ts";

const BASE = "/api/integrations/workflow";
let n8n: N8nServer;
let stack: Stack;

beforeAll(async () => {
  n8n = await startN8nServer();
  // A 2 s answer timeout: a workflow running longer outlasts it (as a 20 s one outlasts the default 15 s).
  stack = await startStack({ OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1", OUTBOUND_TIMEOUT_MS: "2000" });
});
afterAll(async () => { await stack.close(); await n8n.close(); });
beforeEach(() => n8n.reset());

type Account = Awaited<ReturnType<Stack["gw"]["account"]>>;
const http = () => stack.gw.http;

async function connect(a: Account, over: Record<string, unknown> = {}) {
  const res = await http().post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: n8n.url, include_metadata: false, ...over });
  if (res.status !== 200) throw new Error(`connect: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** A connected account whose selection is a fresh active workflow with a POST webhook. */
async function selected(over: { include_metadata?: boolean; active?: boolean; auto_push?: boolean; fails?: boolean; runMs?: number; headerAuth?: { name: string; value: string } } = {}) {
  const a = await stack.gw.account();
  await connect(a, { include_metadata: over.include_metadata ?? false });
  const path = `trendgate-${Math.random().toString(36).slice(2, 10)}`;
  const wf = n8n.addWorkflow({ name: "Trend to brief", active: over.active ?? true, webhook: { path, headerAuth: over.headerAuth }, fails: over.fails, runMs: over.runMs });
  const res = await http().put(`${BASE}/selection`).set(a.auth).send({
    workflow_id: wf.id, workflow_name: wf.name, default_event: "trend_lifecycle", api_base_url: n8n.url, ...(over.auto_push === undefined ? {} : { auto_push: over.auto_push }),
  });
  if (res.status !== 200) throw new Error(`selection: ${res.status} ${JSON.stringify(res.body)}`);
  return { a, wf, path };
}

const executions = async (a: Account) => (await http().get(`${BASE}/executions`).set(a.auth)).body.data as any[];
const execution = (a: Account, id: string, done = (e: any) => e.status !== "pending") =>
  waitFor(async () => { const e = (await executions(a)).find((x) => x.id === id); return e && done(e) ? e : null; }, { timeoutMs: 20_000 });

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe("connect", () => {
  test("a good key is checked with one real call, stored sealed and never returned", async () => {
    const a = await stack.gw.account();
    const res = await connect(a, { include_metadata: true });
    expect(res.body).toEqual({ provider: "n8n", status: "connected", api_base_url: n8n.url, include_metadata: true, connected_at: expect.any(String), signing_secret: expect.stringMatching(/^whsec_/) });
    expect(n8n.apiCalls).toEqual(["GET /api/v1/workflows?limit=1"]);
    expect(JSON.stringify(res.body)).not.toContain(n8n.apiKey);
    const row = await stack.gw.deps.db.connection.findFirst({ where: { accountId: a.accountId, provider: "n8n" } });
    expect(row).toMatchObject({ kind: "workflow", status: "connected" });
    expect(row!.credentialsSealed).not.toContain(n8n.apiKey);
  });

  test("a wrong key, an address that is not n8n, an unreachable one and a private one each say why, and store nothing", async () => {
    const a = await stack.gw.account();
    const wrong = await http().post(`${BASE}/connect`).set(a.auth).send({ api_key: "n8n_api_wrong", api_base_url: n8n.url, include_metadata: false });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toMatchObject({ code: "provider_credentials_rejected", detail: expect.stringContaining("401") });
    expect(wrong.body.errors[0]).toMatchObject({ path: "api_key" });

    const notN8n = await http().post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: `${n8n.url}/somewhere-else`, include_metadata: false });
    expect(notN8n.status).toBe(422);
    expect(notN8n.body).toMatchObject({ code: "not_a_provider_api", detail: expect.stringContaining("n8n public API") });

    const down = await http().post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: `http://127.0.0.1:${await closedPort()}`, include_metadata: false });
    expect(down.status).toBe(422);
    expect(down.body).toMatchObject({ code: "provider_unreachable", detail: expect.stringContaining("not reachable") });

    n8n.failApi(503, 1);
    const failing = await http().post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: n8n.url, include_metadata: false });
    expect(failing.status).toBe(503);
    expect(failing.body).toMatchObject({ code: "service_unavailable", detail: expect.stringContaining("503") });

    const priv = await http().post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: "http://10.0.0.7:5678", include_metadata: false });
    expect(priv.status).toBe(422);
    expect(priv.body.errors[0]).toMatchObject({ path: "api_base_url", code: "blocked_destination" });

    for (const r of [wrong, notN8n, down, failing, priv]) expect(JSON.stringify(r.body)).not.toContain(n8n.apiKey);
    expect(await stack.gw.deps.db.connection.count({ where: { accountId: a.accountId } })).toBe(0);
  });

  test("before connecting, the workflow routes answer 409 not_connected and say how to connect", async () => {
    const a = await stack.gw.account();
    for (const res of [
      await http().get(`${BASE}/workflows`).set(a.auth),
      await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: "x", workflow_name: "x", default_event: "e", api_base_url: n8n.url }),
      await http().post(`${BASE}/push`).set(a.auth).send({ event: "e", data: {} }),
    ]) {
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: "not_connected", detail: expect.stringContaining(`${BASE}/connect`) });
    }
  });
});

describe("workflows and selection", () => {
  test("workflows come page by page through n8n's cursor, with whether each can receive pushes and its production URL", async () => {
    const a = await stack.gw.account();
    await connect(a);
    const hook = n8n.addWorkflow({ id: "wf001", name: "Brief writer", tags: ["content"], webhook: { path: "trend-brief" } });
    n8n.addWorkflow({ id: "wf002", name: "Nightly report", active: false });
    n8n.addWorkflow({ id: "wf003", name: "GET only", webhook: { path: "ping", method: "GET" } });
    const p1 = await http().get(`${BASE}/workflows?limit=2`).set(a.auth);
    expect(p1.status).toBe(200);
    expect(p1.body.data).toEqual([
      { id: hook.id, name: "Brief writer", active: true, tags: ["content"], can_receive_pushes: true, push_url: `${n8n.url}/webhook/trend-brief`, authentication: "none" },
      { id: "wf002", name: "Nightly report", active: false, tags: [], can_receive_pushes: false, push_url: null, authentication: null },
    ]);
    expect(p1.body.next_cursor).toEqual(expect.any(String));
    const p2 = await http().get(`${BASE}/workflows?limit=2&cursor=${encodeURIComponent(p1.body.next_cursor)}`).set(a.auth);
    expect(p2.body).toEqual({ data: [expect.objectContaining({ id: "wf003", can_receive_pushes: false, push_url: null })], next_cursor: null });
    expect(n8n.apiCalls.slice(-2)).toEqual(["GET /api/v1/workflows?limit=2", expect.stringMatching(/^GET \/api\/v1\/workflows\?limit=2&cursor=/)]);
    const bad = await http().get(`${BASE}/workflows?cursor=bm9wZQ`).set(a.auth);
    expect(bad.status).toBe(422);
  });

  test("the selection is checked at n8n: unknown workflow, no webhook trigger, another instance are refused; push_url may be overridden", async () => {
    const a = await stack.gw.account();
    await connect(a);
    const hook = n8n.addWorkflow({ name: "Brief writer", webhook: { path: "brief" } });
    const plain = n8n.addWorkflow({ name: "Cron only" });
    const sel = (over: Record<string, unknown>) => http().put(`${BASE}/selection`).set(a.auth)
      .send({ workflow_id: hook.id, workflow_name: "Brief writer", default_event: "trend_lifecycle", api_base_url: n8n.url, ...over });

    const unknown = await sel({ workflow_id: "nope" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0]).toMatchObject({ path: "workflow_id", code: "not_found" });
    const noHook = await sel({ workflow_id: plain.id });
    expect(noHook.status).toBe(422);
    expect(noHook.body.errors[0]).toMatchObject({ path: "workflow_id", code: "no_webhook_trigger" });
    const other = await sel({ api_base_url: "https://other.app.n8n.cloud" });
    expect(other.status).toBe(422);
    expect(other.body.errors[0]).toMatchObject({ path: "api_base_url" });

    const ok = await sel({});
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      workflow_id: hook.id, workflow_name: "Brief writer", default_event: "trend_lifecycle", api_base_url: n8n.url, push_url: `${n8n.url}/webhook/brief`,
      push_method: "POST", push_url_overridden: false, auto_push: true, workflow_active: true, authentication: "none", push_auth: null,
    });
    const overridden = await sel({ push_url: `${n8n.url}/webhook/brief` + "?via=proxy" });
    expect(overridden.body).toMatchObject({ push_url: `${n8n.url}/webhook/brief?via=proxy`, push_url_overridden: true });
  });
});

describe("push", () => {
  test("a push is queued (202) and POSTed to the workflow's webhook with our event id; include_metadata adds who and when", async () => {
    const { a, path } = await selected({ include_metadata: true, auto_push: false });
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { trend: "AI agents", category: "tech/ai" } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(/^wfe_/), event: "trend_lifecycle", status: "queued" });
    const got = await waitFor(async () => n8n.pushes.find((p) => p.path === path));
    expect(got.method).toBe("POST");
    expect(got.headers["x-trendgate-event-id"]).toBe(res.body.id);
    expect(got.body).toEqual({
      event: "trend_lifecycle", data: { trend: "AI agents", category: "tech/ai" },
      metadata: { event_id: res.body.id, account_id: a.accountId, sent_at: expect.any(String) },
    });
    const e = await execution(a, res.body.id);
    expect(e).toMatchObject({ status: "succeeded", source: "api", event: "trend_lifecycle", attempts: [{ attempt: 1, outcome: "succeeded", error_class: null, response_status: 200 }] });
  });

  test("without include_metadata the body is exactly {event, data}; event defaults to the selection's default_event", async () => {
    const { a, path } = await selected({ auto_push: false });
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ data: { trend: "Heat pumps" } });
    expect(res.body.event).toBe("trend_lifecycle");
    const got = await waitFor(async () => n8n.pushes.find((p) => p.path === path));
    expect(got.body).toEqual({ event: "trend_lifecycle", data: { trend: "Heat pumps" } });
  });

  test("an inactive workflow's 404 fails the push at once with a message saying to activate the workflow", async () => {
    const { a } = await selected({ active: false, auto_push: false });
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { trend: "x" } });
    const e = await execution(a, res.body.id);
    expect(e.status).toBe("failed");
    expect(e.attempts).toHaveLength(1);
    expect(e.attempts[0]).toMatchObject({ outcome: "failed", error_class: "not_found", response_status: 404, error_message: expect.stringContaining("activate the workflow"), next_retry_at: null });
    expect(e.last_error).toContain("is not registered");
    expect(n8n.pushes).toHaveLength(0);
  });

  test("5xx answers are retried and every attempt is listed; the push arrives once", async () => {
    const { a, path } = await selected({ auto_push: false });
    n8n.failWebhook(503, 2);
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { n: 1 } });
    const e = await execution(a, res.body.id);
    expect(e.status).toBe("succeeded");
    expect(e.attempts.map((x: any) => [x.outcome, x.error_class])).toEqual([["retrying", "unavailable"], ["retrying", "unavailable"], ["succeeded", null]]);
    expect(n8n.pushes.filter((p) => p.path === path)).toHaveLength(1);
  });

  test("a 429 is retried after Retry-After", async () => {
    const { a, path } = await selected({ auto_push: false });
    n8n.failWebhook(429, 1, 1);
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { n: 2 } });
    const e = await execution(a, res.body.id);
    expect(e.status).toBe("succeeded");
    expect(e.attempts[0]).toMatchObject({ outcome: "retrying", error_class: "rate_limited", response_status: 429 });
    expect(n8n.pushes.filter((p) => p.path === path)).toHaveLength(1);
  });

  test("the same push sent twice with one Idempotency-Key is queued and sent once", async () => {
    const { a, path } = await selected({ auto_push: false });
    const send = () => http().post(`${BASE}/push`).set(a.auth).set("Idempotency-Key", "push-once-1").send({ event: "trend_lifecycle", data: { n: 3 } });
    const first = await send();
    const second = await send();
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    await execution(a, first.body.id);
    expect(n8n.pushes.filter((p) => p.path === path)).toHaveLength(1);
    expect(await stack.gw.deps.db.outboxMessage.count({ where: { accountId: a.accountId, queue: QUEUES.workflowPushes } })).toBe(1);
  });

  test("a payload Postgres cannot store (NUL) is refused with 422 and queues nothing", async () => {
    const { a } = await selected({ auto_push: false });
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { note: "a\u0000b" } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ path: "data" });
    expect(await stack.gw.deps.db.outboxMessage.count({ where: { accountId: a.accountId } })).toBe(0);
  });

  test("a push without a selected workflow answers 409 and queues nothing", async () => {
    const a = await stack.gw.account();
    await connect(a);
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "x", data: {} });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain(`${BASE}/selection`);
  });
});

describe("trend events", () => {
  test("each trend event reaches the selected workflow once, as default_event with the trend payload", async () => {
    const { a, path } = await selected({});
    const e = trendEvent(a.accountId, { trend_id: `trend_wf_${Date.now()}` });
    await stack.publish(e);
    await stack.publish(e); // the same event again: no second push
    const got = await waitFor(async () => n8n.pushes.find((p) => p.path === path));
    expect(got.headers["x-trendgate-event-id"]).toBe(e.id);
    expect(got.body).toMatchObject({ event: "trend_lifecycle", data: { id: e.id, trend_id: e.trend_id, trend_name: e.trend_name, velocity: e.velocity } });
    const ex = await execution(a, e.id);
    expect(ex).toMatchObject({ status: "succeeded", source: "trend_event" });
    await waitFor(async () => (await stack.gw.deps.queues.get(QUEUES.trendEvents).getJobCountByTypes("waiting", "active", "delayed")) === 0);
    expect(n8n.pushes.filter((p) => p.path === path)).toHaveLength(1);
  });

  test("with auto_push off, trend events are not pushed", async () => {
    const { a, path } = await selected({ auto_push: false });
    const e = trendEvent(a.accountId, { trend_id: `trend_wf_off_${Date.now()}` });
    await stack.publish(e);
    await waitFor(async () => (await stack.gw.deps.queues.get(QUEUES.trendEvents).getJobCountByTypes("waiting", "active", "delayed")) === 0);
    expect(await executions(a)).toEqual([]);
    expect(n8n.pushes.filter((p) => p.path === path)).toHaveLength(0);
  });
});

describe("connection", () => {
  test("GET shows the key connection without the key; DELETE answers 204, cancels its waiting pushes and disconnects", async () => {
    const { a } = await selected({});
    const status = await http().get(`${BASE}/connection`).set(a.auth);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ provider: "n8n", kind: "workflow", status: "connected", account: { api_base_url: n8n.url }, last_error: null });
    expect(JSON.stringify(status.body)).not.toContain(n8n.apiKey);

    // A push that waits for its retry (n8n asked for an hour's pause) when the connection is deleted.
    n8n.failWebhook(429, 1, 3600);
    const pushed = await http().post(`${BASE}/push`).set(a.auth).send({ event: "e", data: { n: 1 } });
    expect(pushed.status).toBe(202);
    await execution(a, pushed.body.id, (e) => e.attempts.length === 1);

    const del = await http().delete(`${BASE}/connection`).set(a.auth);
    expect(del.status).toBe(204);
    expect((await executions(a)).find((x) => x.id === pushed.body.id)).toMatchObject({ status: "cancelled", completed_at: expect.any(String) });
    expect((await http().get(`${BASE}/connection`).set(a.auth)).status).toBe(404);
    expect((await http().delete(`${BASE}/connection`).set(a.auth)).status).toBe(404);
    expect(await stack.gw.deps.db.connection.count({ where: { accountId: a.accountId, provider: "n8n" } })).toBe(0);
    const again = await http().post(`${BASE}/push`).set(a.auth).send({ event: "e", data: {} });
    expect(again.status).toBe(409);
  });

  test("another account's DELETE does not touch this connection", async () => {
    const { a } = await selected({});
    const other = await stack.gw.account();
    expect((await http().delete(`${BASE}/connection`).set(other.auth)).status).toBe(404);
    expect((await http().get(`${BASE}/connection`).set(a.auth)).body.status).toBe("connected");
  });
});

describe("n8n as it really behaves", () => {
  const pushOne = async (a: Account, n = 1) => {
    const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { n } });
    expect(res.status).toBe(202);
    return res.body.id as string;
  };
  const at = (path: string) => n8n.pushes.filter((p) => p.path === path).length;
  const replay = (a: Account, id: string) => http().post(`${BASE}/executions/${id}/replay`).set(a.auth);

  test("a push in n8n's start-up window (its HTML 404 before the webhooks are registered) is retried and arrives once", async () => {
    const { a, path } = await selected({ auto_push: false });
    await n8n.restart({ notReadyMs: 1500 });
    const id = await pushOne(a);
    const e = await execution(a, id);
    expect(e.status).toBe("succeeded");
    expect(e.attempts.map((x: any) => [x.outcome, x.error_class, x.response_status])).toEqual([["retrying", "unavailable", 404], ["succeeded", null, 200]]);
    expect(e.attempts[0].error_message).toContain("has not registered its active webhooks yet");
    expect(at(path)).toBe(1);
  }, 30_000);

  test("a failing workflow (500 Error in workflow after it ran) is run once, recorded as unknown, and runs again only when replayed", async () => {
    const { a, path } = await selected({ auto_push: false, fails: true });
    const id = await pushOne(a);
    const e = await execution(a, id);
    expect(e.status).toBe("unknown");
    expect(e.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: "unknown", response_status: 500, next_retry_at: null, error_message: expect.stringContaining("may have acted") })]);
    await new Promise((r) => setTimeout(r, 3000)); // longer than the whole retry schedule
    expect(at(path)).toBe(1);

    const again = await replay(a, id);
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ id, status: "queued", attempt: 2 });
    const e2 = await execution(a, id, (x) => x.attempts.length === 2 && x.status !== "pending");
    expect(e2).toMatchObject({ status: "unknown", attempts: [expect.anything(), expect.objectContaining({ attempt: 2, outcome: "unknown" })] });
    expect(at(path)).toBe(2);
  }, 30_000);

  test("a slow workflow that outlasts our timeout is run once and recorded as unknown, not sent again", async () => {
    const { a, path } = await selected({ auto_push: false, runMs: 3500 });
    const id = await pushOne(a);
    const e = await execution(a, id);
    expect(e).toMatchObject({ status: "unknown", attempts: [expect.objectContaining({ outcome: "unknown", response_status: null, error_message: expect.stringContaining("may be running") })] });
    await new Promise((r) => setTimeout(r, 3000));
    expect(at(path)).toBe(1);
  }, 30_000);

  test("replay: only failed or unknown pushes of the account (409 for a succeeded one, 404 for another account's or none)", async () => {
    const { a } = await selected({ auto_push: false });
    const id = await pushOne(a);
    expect((await execution(a, id)).status).toBe("succeeded");
    const done = await replay(a, id);
    expect(done.status).toBe(409);
    expect(done.body).toMatchObject({ code: "conflict", detail: expect.stringContaining("succeeded") });
    const other = await stack.gw.account();
    expect((await replay(other, id)).status).toBe(404);
    expect((await replay(a, "wfe_nope")).status).toBe(404);
  });

  test("pushes are signed with the connection's secret: the Standard Webhooks verifier accepts them; connecting again keeps the secret", async () => {
    const a = await stack.gw.account();
    const secret = (await connect(a)).body.signing_secret as string;
    const path = `signed-${Math.random().toString(36).slice(2, 10)}`;
    const wf = n8n.addWorkflow({ name: "Signed", webhook: { path } });
    expect((await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: wf.id, workflow_name: wf.name, api_base_url: n8n.url, auto_push: false })).status).toBe(200);
    const again = await connect(a); // a new key, the same instance
    expect(again.body.signing_secret).toBeNull();
    const id = await pushOne(a);
    expect((await execution(a, id)).status).toBe("succeeded");
    const got = n8n.pushes.find((p) => p.path === path)!;
    expect(got.headers["webhook-id"]).toBe(id);
    const verified = new StandardWebhook(secret.slice("whsec_".length)).verify(JSON.stringify(got.body), {
      "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]),
    });
    expect(verified).toEqual(got.body);
    expect(WorkflowPushSent.safeParse(got.body).success).toBe(true); // the catalog's workflow channel schema (/asyncapi.json)
    expect(() => new StandardWebhook(Buffer.alloc(32, 9).toString("base64")).verify(JSON.stringify(got.body), got.headers as any)).toThrow();
  });

  test("a Webhook node with Header Auth is listed as such, needs push_auth to be selected, and then takes our pushes; the value is never shown", async () => {
    const a = await stack.gw.account();
    await connect(a);
    const path = `guarded-${Math.random().toString(36).slice(2, 10)}`;
    const wf = n8n.addWorkflow({ name: "Guarded", webhook: { path, headerAuth: { name: "X-N8N-Auth", value: "hdr-s3cret-value" } } });
    const listed = (await http().get(`${BASE}/workflows?limit=250`).set(a.auth)).body.data.find((w: any) => w.id === wf.id);
    expect(listed).toMatchObject({ can_receive_pushes: true, authentication: "header" });

    const select = (over: object) => http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: wf.id, workflow_name: wf.name, api_base_url: n8n.url, auto_push: false, ...over });
    const missing = await select({});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([expect.objectContaining({ path: "push_auth", code: "authentication_required" })]);

    // Without its credential n8n's node refuses an unsigned, unauthenticated push (403) and the workflow never runs.
    const bare = await fetch(`${n8n.url}/webhook/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(bare.status).toBe(403);
    expect(at(path)).toBe(0);

    const ok = await select({ push_auth: { type: "header", name: "X-N8N-Auth", value: "hdr-s3cret-value" } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ authentication: "header", push_auth: { type: "header", name: "X-N8N-Auth" } });
    const id = await pushOne(a);
    expect((await execution(a, id)).status).toBe("succeeded");
    expect(at(path)).toBe(1);
    const shown = JSON.stringify([ok.body, (await http().get(`${BASE}/selection`).set(a.auth)).body, await executions(a)]);
    expect(shown).not.toContain("hdr-s3cret-value");
    const row = await stack.gw.deps.db.connection.findFirstOrThrow({ where: { accountId: a.accountId, provider: "n8n" } });
    expect(JSON.stringify(row)).not.toContain("hdr-s3cret-value"); // sealed at rest

    // A credential that no longer matches (changed in n8n): the push fails saying what to do, and is not retried.
    await select({ push_auth: { type: "header", name: "X-N8N-Auth", value: "stale" } });
    await new Promise((r) => setTimeout(r, 1100)); // the worker's connection cache
    const e = await execution(a, await pushOne(a, 2));
    expect(e).toMatchObject({ status: "failed", attempts: [expect.objectContaining({ response_status: 403, error_message: expect.stringContaining("push_auth") })] });
    expect(at(path)).toBe(1);
  });

  test("push_auth's header name follows the webhook custom headers' rule: a header the service sets itself or a name that is not an HTTP token answers 422 naming push_auth.name, and changes nothing", async () => {
    const a = await stack.gw.account();
    await connect(a);
    const path = `named-${Math.random().toString(36).slice(2, 10)}`;
    const wf = n8n.addWorkflow({ name: "Named", webhook: { path, headerAuth: { name: "Authorization", value: "Bearer hdr-t0ken" } } });
    const select = (name: string) => http().put(`${BASE}/selection`).set(a.auth)
      .send({ workflow_id: wf.id, workflow_name: wf.name, api_base_url: n8n.url, auto_push: false, push_auth: { type: "header", name, value: "Bearer hdr-t0ken" } });
    const before = await stack.gw.deps.db.connection.findFirstOrThrow({ where: { accountId: a.accountId, provider: "n8n" } });
    for (const name of [
      "Host", "Content-Length", "transfer-encoding", "Connection", "Cookie", // hop-by-hop and framing: Content-Length: 5 desynchronised a receiver
      "X-Trendgate-Event-Id", "webhook-signature", "Webhook-Id", "X-Webhook-Signature", // our own event id and signature
      "Bad Name", "X-N8N:Auth", "X-Auth\r\nInjected", "", "Ünicode", "X-(Auth)", // not RFC 9110 tokens
    ]) {
      const res = await select(name);
      expect({ name, status: res.status, code: res.body.code }).toEqual({ name, status: 422, code: "validation_failed" });
      expect(res.body.errors).toEqual([expect.objectContaining({ path: "push_auth.name" })]);
    }
    // Nothing saved, nothing asked of n8n for a refused body.
    expect(await stack.gw.deps.db.connection.findFirstOrThrow({ where: { accountId: a.accountId, provider: "n8n" } })).toEqual(before);

    // A webhook subscription refuses the same names the same way (one rule for both).
    for (const name of ["Content-Length", "X-Trendgate-Event-Id", "Bad Name"]) {
      const hook = await http().post("/api/integrations/webhooks").set(a.auth)
        .send(webhookBody("https://hooks.example.com/in", { headers: { [name]: "v" } }));
      expect(hook.status).toBe(422);
      expect(hook.body.errors.map((e: any) => e.path)).toEqual([`headers.${name}`]);
    }

    // Authorization (n8n's usual Header Auth name) is the user's to give, and pushes carry it.
    const ok = await select("Authorization");
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ authentication: "header", push_auth: { type: "header", name: "Authorization" } });
    expect((await execution(a, await pushOne(a))).status).toBe("succeeded");
    expect(at(path)).toBe(1);
  });

  test("Basic Auth is sent as n8n's node expects; a JWT-authenticated node cannot be selected", async () => {
    const a = await stack.gw.account();
    await connect(a);
    const path = `basic-${Math.random().toString(36).slice(2, 10)}`;
    const wf = n8n.addWorkflow({ name: "Basic", webhook: { path, basicAuth: { user: "trendgate", password: "b4sic-pass" } } });
    const sel = await http().put(`${BASE}/selection`).set(a.auth)
      .send({ workflow_id: wf.id, workflow_name: wf.name, api_base_url: n8n.url, auto_push: false, push_auth: { type: "basic", username: "trendgate", password: "b4sic-pass" } });
    expect(sel.body).toMatchObject({ authentication: "basic", push_auth: { type: "basic", username: "trendgate" } });
    expect((await execution(a, await pushOne(a))).status).toBe("succeeded");
    expect(at(path)).toBe(1);

    const jwt = n8n.addWorkflow({ name: "JWT", webhook: { path: `jwt-${path}`, jwtAuth: true } });
    const refused = await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: jwt.id, workflow_name: jwt.name, api_base_url: n8n.url });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: "workflow_id", code: "unsupported_authentication" })]);
  });

  test("a retry goes to the push's own workflow, not the one selected meanwhile", async () => {
    const { a, wf, path } = await selected({ auto_push: false });
    const other = n8n.addWorkflow({ name: "Another", webhook: { path: `other-${wf.id}` } });
    n8n.failWebhook(429, 1, 2);
    const id = await pushOne(a);
    await execution(a, id, (e) => e.attempts.length === 1);
    const sel = await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: other.id, workflow_name: other.name, default_event: "trend_lifecycle", api_base_url: n8n.url, auto_push: false });
    expect(sel.status).toBe(200);
    const e = await execution(a, id);
    expect(e.status).toBe("succeeded");
    expect(at(path)).toBe(1);
    expect(at(`other-${wf.id}`)).toBe(0);
  }, 30_000);

  test("a changed webhook path is followed: the workflow is read again before the push fails, and the selection shows the new URL", async () => {
    const { a, wf, path } = await selected({ auto_push: false });
    n8n.setWebhookPath(wf.id, `${path}-v2`);
    const id = await pushOne(a);
    const e = await execution(a, id);
    expect(e).toMatchObject({ status: "succeeded", attempts: [expect.objectContaining({ attempt: 1, outcome: "succeeded", response_status: 200 })] });
    expect(at(`${path}-v2`)).toBe(1);
    expect((await http().get(`${BASE}/selection`).set(a.auth)).body).toMatchObject({ workflow_id: wf.id, push_url: `${n8n.url}/webhook/${path}-v2` });
  });

  test("an overridden push URL is the user's: a not-registered 404 there fails, even if the workflow's own path changed", async () => {
    const { a, wf, path } = await selected({ auto_push: false });
    const sel = await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: wf.id, workflow_name: wf.name, default_event: "trend_lifecycle", api_base_url: n8n.url, push_url: `${n8n.url}/webhook/${path}`, auto_push: false });
    expect(sel.body.push_url_overridden).toBe(true);
    n8n.setWebhookPath(wf.id, `${path}-v2`);
    const e = await execution(a, await pushOne(a));
    expect(e).toMatchObject({ status: "failed", attempts: [expect.objectContaining({ error_class: "not_found" })] });
    expect(at(`${path}-v2`)).toBe(0);
  });

  test("failures show on the connection (last_error since last_error_at) with one account event; a success clears them", async () => {
    const { a, wf } = await selected({ auto_push: false });
    n8n.setActive(wf.id, false);
    for (const n of [1, 2]) expect((await execution(a, await pushOne(a, n))).status).toBe("failed");
    const conn = (await http().get(`${BASE}/connection`).set(a.auth)).body;
    expect(conn).toMatchObject({ status: "connected", last_error: expect.stringContaining("activate the workflow"), last_error_at: expect.any(String) });
    const events = (await http().get("/api/events?type=connector.delivery_failing").set(a.auth)).body.data;
    expect(events).toEqual([expect.objectContaining({ data: expect.objectContaining({ provider: "n8n", workflow_id: wf.id, outcome: "failed" }) })]);
    expect(catalogProblemsOf(events)).toEqual([]); // exactly the catalog's connector.delivery_failing

    n8n.setActive(wf.id, true);
    expect((await execution(a, await pushOne(a, 3))).status).toBe("succeeded");
    expect((await http().get(`${BASE}/connection`).set(a.auth)).body).toMatchObject({ last_error: null, last_error_at: null });
  });

  test("after a listing answered 401 (key revoked: needs_reauth), trend events are still pushed to the webhook, which needs no key", async () => {
    const { a, path } = await selected({});
    n8n.failApi(401, 1);
    expect((await http().get(`${BASE}/workflows`).set(a.auth)).status).not.toBe(200);
    expect((await http().get(`${BASE}/connection`).set(a.auth)).body.status).toBe("needs_reauth");
    const e = trendEvent(a.accountId, { trend_id: `trend_wf_reauth_${Date.now()}` });
    await stack.publish(e);
    const ex = await execution(a, e.id);
    expect(ex).toMatchObject({ status: "succeeded", source: "trend_event" });
    expect(at(path)).toBe(1);
  });

  test("limit holds on later pages although n8n's cursor keeps the page size it was made with", async () => {
    const a = await stack.gw.account();
    await connect(a);
    for (let i = 1; i <= 7; i++) n8n.addWorkflow({ id: `wfp${i}`, name: `W${i}`, webhook: { path: `p${i}` } });
    const seen: string[] = [];
    let cursor: string | null = null;
    for (const limit of [2, 3, 1, 5]) {
      const res: any = await http().get(`${BASE}/workflows?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`).set(a.auth);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(Math.min(limit, 7 - seen.length));
      seen.push(...res.body.data.map((w: any) => w.id));
      cursor = res.body.next_cursor;
    }
    expect(seen).toEqual(["wfp1", "wfp2", "wfp3", "wfp4", "wfp5", "wfp6", "wfp7"]);
    expect(cursor).toBeNull();
  });

  test("the stand-in's workflows carry activeVersion, whose nodes are what n8n registered", async () => {
    const wf = n8n.addWorkflow({ name: "Published", webhook: { path: "pub" } }) as any;
    expect(wf.activeVersion).toMatchObject({ versionId: wf.activeVersionId, nodes: [expect.objectContaining({ parameters: expect.objectContaining({ path: "pub" }) }), expect.anything()] });
    n8n.setActive(wf.id, false);
    expect(n8n.workflow(wf.id)).toMatchObject({ activeVersion: null, activeVersionId: null });
  });
});
