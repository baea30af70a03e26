import http from "node:http";
import net from "node:net";
import { startStack, type Stack } from "./stack.ts";

// Shared by the fault-injection suites (tests/faults/delivery-*.test.ts): a cleanup registry, a receiver that can
// fail, hang and count concurrency, private Redis servers that can be flushed, and webhook helpers.

// The cleanup registry and private Redis servers are the process-level kit's (one registry for both kits).
import { onCleanup } from "./faults-proc-kit.ts";
export { onCleanup, privateRedis, runCleanups } from "./faults-proc-kit.ts";

export const BASE = "/api/integrations/webhooks";

export async function stack(env: Record<string, string> = {}, workers = 1): Promise<Stack> {
  const s = await startStack(env, workers);
  onCleanup(() => s.close());
  return s;
}

/** A new account (enterprise plan: tests page a lot) with instant_stream subscriptions (threshold 100) on `urls`. */
export async function subscriptions(s: Stack, urls: string[], over: Record<string, unknown> = {}) {
  const account = await s.gw.account("enterprise");
  const ids: string[] = [];
  for (const url of urls) {
    const res = await s.gw.http.post(BASE).set(account.auth)
      .send({ url, trigger_type: "trend_velocity", delivery_mode: "instant_stream", threshold_value: 100, cooldown_seconds: 0, ...over });
    if (res.status !== 201) throw new Error(`create webhook answered ${res.status}: ${JSON.stringify(res.body)}`);
    ids.push(res.body.id as string);
  }
  return { account, ids };
}

/** Every execution of a webhook through the API (all pages). */
export async function allExecutions(s: Stack, auth: { Authorization: string }, webhookId: string) {
  const out: { id: string; delivery_id: string; attempt: number; outcome: string; response_status: number | null }[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any } = await s.gw.http.get(`${BASE}/${webhookId}/executions`).query({ limit: 100, ...(cursor ? { cursor } : {}) }).set(auth);
    if (res.status !== 200) throw new Error(`executions answered ${res.status}`);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

export interface FaultRequest { path: string; webhookId: string; status: number | "hung"; at: number }
type Answer = { status: number; headers?: Record<string, string> } | "hang";

/**
 * A real HTTP receiver. `respond(path, n)` answers each request (n counts requests to that path from 1) with a
 * status, or "hang": the request is held, unanswered, until `releaseHung()`. Tracks how many requests each path and
 * the whole server have open at once (current and maximum).
 */
export async function faultReceiver(respond: (path: string, n: number) => Answer = () => ({ status: 204 })) {
  const requests: FaultRequest[] = [];
  const perPath = new Map<string, number>();
  const open = new Map<string, number>();
  const maxOpen = new Map<string, number>();
  let openTotal = 0, maxOpenTotal = 0;
  let responder = respond;
  const hung: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    open.set(path, (open.get(path) ?? 0) + 1);
    maxOpen.set(path, Math.max(maxOpen.get(path) ?? 0, open.get(path)!));
    maxOpenTotal = Math.max(maxOpenTotal, ++openTotal);
    let closed = false;
    const done = () => { if (!closed) { closed = true; open.set(path, open.get(path)! - 1); openTotal--; } };
    res.on("close", done);
    req.resume();
    req.on("end", () => {
      const n = (perPath.get(path) ?? 0) + 1;
      perPath.set(path, n);
      const answer = responder(path, n);
      const r: FaultRequest = { path, webhookId: String(req.headers["webhook-id"]), status: answer === "hang" ? "hung" : answer.status, at: Date.now() };
      requests.push(r);
      const reply = (a: { status: number; headers?: Record<string, string> }) => { r.status = a.status; res.writeHead(a.status, a.headers); res.end(); };
      if (answer === "hang") hung.push(() => reply({ status: 204 }));
      else reply(answer);
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  const rx = {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    requests,
    on: (path: string) => requests.filter((r) => r.path === path),
    openNow: (path: string) => open.get(path) ?? 0,
    maxOpen: (path: string) => maxOpen.get(path) ?? 0,
    maxOpenTotal: () => maxOpenTotal,
    setResponder(fn: typeof respond) { responder = fn; },
    /** Answers every held request (204) and stops holding new ones. */
    releaseHung() { responder = () => ({ status: 204 }); for (const r of hung.splice(0)) r(); },
    close: () => new Promise<void>((r) => { rx.releaseHung(); server.closeAllConnections(); server.close(() => r()); }),
  };
  onCleanup(() => rx.close());
  return rx;
}
export type FaultReceiver = Awaited<ReturnType<typeof faultReceiver>>;

/** Counts of `values`, e.g. requests per webhook-id. */
export function countBy<T>(values: T[]): Map<T, number> {
  const m = new Map<T, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}
