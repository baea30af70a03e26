// n8n delivery confirmed, not assumed (issue 45): a 2xx from n8n's webhook only says it took the request. While its
// migrations run it answers `200 n8n is starting up. Please wait` and runs nothing; it loses runs it took when it
// stops. Pushes are therefore retried on that answer, confirmed from n8n's own execution list (the API key is held),
// and sent again under the same id when n8n never ran them. With the stand-in's start-up phases
// (tests/peers/n8n-server.ts) and the gateway and workers end to end.
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { startN8nServer, type N8nServer } from "../peers/n8n-server.ts";

const BASE = "/api/integrations/workflow";
let n8n: N8nServer;
let stack: Stack;

beforeAll(async () => {
  n8n = await startN8nServer();
  // The second retry is planned 10 minutes out: a start-up answer must not wait for it. Confirmation: pushes taken 2 s
  // ago are looked for every second, and sent again when not run within 4 s.
  stack = await startStack({
    OUTBOX_RETRY_SCHEDULE_SECONDS: "1,600,1",
    WORKFLOW_CONFIRM_AFTER_SECONDS: "2", WORKFLOW_CONFIRM_WITHIN_SECONDS: "4", WORKFLOW_CONFIRM_INTERVAL_SECONDS: "1",
  });
});
afterAll(async () => { await stack.close(); await n8n.close(); });
beforeEach(() => n8n.reset());

type Account = Awaited<ReturnType<Stack["gw"]["account"]>>;
const http = () => stack.gw.http;

/** A connected account whose selection is a fresh active workflow with a POST webhook (no trend pushes). */
async function selected(webhook: { headerAuth?: { name: string; value: string } } = {}, pushAuth?: object) {
  const a = await stack.gw.account();
  const c = await http().post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: n8n.url, include_metadata: false });
  if (c.status !== 200) throw new Error(`connect: ${c.status} ${JSON.stringify(c.body)}`);
  const path = `confirmed-${Math.random().toString(36).slice(2, 10)}`;
  const wf = n8n.addWorkflow({ name: "Trend to brief", webhook: { path, ...webhook } });
  const sel = await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: wf.id, workflow_name: wf.name, api_base_url: n8n.url, auto_push: false, ...(pushAuth ? { push_auth: pushAuth } : {}) });
  if (sel.status !== 200) throw new Error(`selection: ${sel.status} ${JSON.stringify(sel.body)}`);
  return { a, wf, path };
}

async function pushOne(a: Account, n = 1): Promise<string> {
  const res = await http().post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { n } });
  expect(res.status).toBe(202);
  return res.body.id;
}

const execution = (a: Account, id: string, done: (e: any) => boolean, timeoutMs = 20_000) =>
  waitFor(async () => {
    const e = ((await http().get(`${BASE}/executions`).set(a.auth)).body.data as any[]).find((x) => x.id === id);
    return e && done(e) ? e : null;
  }, { timeoutMs });
const ran = (path: string) => n8n.pushes.filter((p) => p.path === path);

test("n8n's `200 n8n is starting up` (migrations running, nothing ran) is retried, and the push runs once", async () => {
  const { a, path } = await selected();
  await n8n.restart({ kill: true, migratingMs: 60_000, notReadyMs: 0 });
  const id = await pushOne(a);
  await execution(a, id, (x) => x.attempts.length >= 1);
  n8n.finishStartUp(); // migrations done
  const e = await execution(a, id, (x) => x.status !== "pending");
  expect(e.status).toBe("succeeded");
  expect(e.attempts.map((x: any) => [x.outcome, x.error_class, x.response_status])).toEqual([["retrying", "unavailable", 200], ["succeeded", null, 200]]);
  expect(e.attempts[0].error_message).toContain("n8n is starting up");
  expect(ran(path).map((p) => p.headers["x-trendgate-event-id"])).toEqual([id]);
}, 30_000);

test("a push n8n took (200) but never ran is sent again under the same id, runs once and ends confirmed", async () => {
  const { a, wf, path } = await selected();
  n8n.dropAcknowledged(1); // taken and answered, lost as n8n stopped
  const id = await pushOne(a);
  const e = await execution(a, id, (x) => x.delivery === "confirmed");
  expect(e).toMatchObject({ status: "succeeded", delivery: "confirmed" });
  expect(e.attempts.map((x: any) => [x.attempt, x.outcome, x.response_status])).toEqual([[1, "succeeded", 200], [2, "succeeded", 200]]);
  const took = n8n.acknowledged.filter((p) => p.path === path);
  expect(took.map((p) => [p.headers["x-trendgate-event-id"], p.headers["webhook-id"]])).toEqual([[id, id], [id, id]]);
  expect(ran(path)).toHaveLength(1);
  const runs = n8n.executions.filter((x) => x.workflowId === wf.id).map((x) => x.id);
  expect(runs).toHaveLength(1);
  const row = await stack.gw.deps.db.outboxMessage.findFirstOrThrow({ where: { queue: QUEUES.workflowPushes, dedupKey: id } });
  expect(row.result).toMatchObject({ confirmation: "confirmed", resends: 1, run_id: runs[0] });
}, 30_000);

test("a push n8n ran shows `delivered`, then `confirmed` once its run is in n8n's execution list, and is not sent again", async () => {
  const { a, path } = await selected();
  const id = await pushOne(a);
  const delivered = await execution(a, id, (x) => x.status === "succeeded");
  expect(delivered.delivery).toBe("delivered"); // taken; its run not looked for yet (a pass looks after 2 s)
  const e = await execution(a, id, (x) => x.delivery === "confirmed");
  expect(e.attempts).toHaveLength(1);
  expect(n8n.apiCalls).toContainEqual(expect.stringMatching(/^GET \/api\/v1\/executions\?workflowId=.+&includeData=true/));
  await new Promise((r) => setTimeout(r, 5000)); // past the bound: nothing is sent again
  expect(ran(path)).toHaveLength(1);
  expect((await execution(a, id, () => true)).attempts).toHaveLength(1);
}, 30_000);

test("a push_auth credential is dropped when another workflow is selected, and is not sent to it", async () => {
  const guard = { name: "X-N8N-Auth", value: "hdr-s3cret-value" };
  const { a, wf } = await selected({ headerAuth: guard }, { type: "header", ...guard });
  const open = n8n.addWorkflow({ name: "No auth", webhook: { path: `open-${wf.id}` } });
  const sel = await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: open.id, workflow_name: open.name, api_base_url: n8n.url, auto_push: false });
  expect(sel.status).toBe(200);
  expect(sel.body).toMatchObject({ authentication: "none", push_auth: null });
  await new Promise((r) => setTimeout(r, 1100)); // the worker's connection cache
  const id = await pushOne(a);
  await execution(a, id, (x) => x.status === "succeeded");
  const got = ran(`open-${wf.id}`);
  expect(got).toHaveLength(1);
  expect(got[0].headers["x-n8n-auth"]).toBeUndefined();
  expect(JSON.stringify(got[0].headers)).not.toContain(guard.value);
  // Back to the guarded workflow: its credential must be given again.
  const back = await http().put(`${BASE}/selection`).set(a.auth).send({ workflow_id: wf.id, workflow_name: wf.name, api_base_url: n8n.url, auto_push: false });
  expect(back.status).toBe(422);
  expect(back.body.errors).toEqual([expect.objectContaining({ path: "push_auth", code: "authentication_required" })]);
});

test("n8n's start-up 404 (webhooks not registered yet, 5-12 s) is retried within seconds, not after the schedule's next delay", async () => {
  const { a } = await selected();
  await n8n.restart({ kill: true, notReadyMs: 60_000 });
  const id = await pushOne(a);
  const e = await execution(a, id, (x) => x.attempts.length >= 2);
  for (const x of e.attempts.slice(0, 2)) expect(x).toMatchObject({ outcome: "retrying", error_class: "unavailable", response_status: 404 });
  // Attempt 2's planned delay is 600 s: the start-up answer brings it within seconds.
  const second = e.attempts[1];
  const waitMs = Date.parse(second.next_retry_at) - Date.parse(second.created_at);
  expect(waitMs).toBeGreaterThan(2000);
  expect(waitMs).toBeLessThanOrEqual(6000);
}, 30_000);

test("with the API key revoked and the webhook path changed, the failure names the 401 of the re-read, not an inactive workflow", async () => {
  const { a, wf, path } = await selected();
  n8n.setWebhookPath(wf.id, `${path}-v2`);
  n8n.failApi(401, 1000); // the key is revoked: every API call is refused
  const id = await pushOne(a);
  const e = await execution(a, id, (x) => x.status !== "pending");
  expect(e.status).toBe("failed");
  expect(e.attempts).toEqual([expect.objectContaining({ outcome: "failed", error_class: "unauthorized", response_status: 404, next_retry_at: null })]);
  expect(e.attempts[0].error_message).toContain("401");
  expect(e.attempts[0].error_message).toContain("connect again with a valid API key");
  expect(e.attempts[0].error_message).not.toContain("activate the workflow");
  expect(ran(`${path}-v2`)).toHaveLength(0);
});
