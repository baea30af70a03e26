import crypto from "node:crypto";
import type http from "node:http";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";

// A local stand-in for an n8n instance: the public API v1 as documented (docs.n8n.io/api/api-reference/) and the
// production webhook URLs. API: X-N8N-API-KEY on every call, 401 `{message: "unauthorized"}` without a valid one;
// GET /api/v1/workflows with `limit` (default 100, max 250) and `cursor`, answering `{data, nextCursor}` (nextCursor
// null on the last page); GET /api/v1/workflows/{id} (404 `{message: "Not Found"}`). Webhooks: `{METHOD} /webhook/{path}`
// of an active workflow's Webhook node records the push and answers `{message: "Workflow was started"}`; an inactive
// or unknown one answers 404 with n8n's "is not registered" body. Faults: the next N answers of a webhook or of the
// API can be a given status (5xx, 429 with Retry-After).

export interface N8nNode { id: string; name: string; type: string; typeVersion: number; position: [number, number]; parameters: Record<string, unknown>; webhookId?: string; disabled?: boolean }
export interface N8nWorkflow { id: string; name: string; active: boolean; createdAt: string; updatedAt: string; tags: { id: string; name: string }[]; nodes: N8nNode[]; connections: Record<string, unknown>; settings: Record<string, unknown> }

export interface RecordedPush { method: string; path: string; headers: http.IncomingHttpHeaders; body: any; at: Date }

export interface N8nServer {
  url: string;
  apiKey: string;
  /** Adds a workflow; `webhook` gives it a Webhook trigger node (path, method; default POST). */
  addWorkflow(w: { name: string; active?: boolean; tags?: string[]; webhook?: { path: string; method?: string | string[]; disabled?: boolean } | null; id?: string }): N8nWorkflow;
  workflow(id: string): N8nWorkflow | undefined;
  setActive(id: string, active: boolean): void;
  pushes: RecordedPush[];
  /** API requests seen (method and path with query), for asserting one check call. */
  apiCalls: string[];
  /** The next `times` webhook answers are `status` (with Retry-After seconds for 429). */
  failWebhook(status: number, times: number, retryAfterSeconds?: number): void;
  /** The next `times` API answers are `status`. */
  failApi(status: number, times: number): void;
  /** Webhook answers wait until released (to hold a push in flight). */
  holdWebhooks(): () => void;
  /** Each recorded push is answered only `ms` later (a kill -9 can fall between the workflow starting and our record). */
  slowWebhooks(ms: number): void;
  /** Recorded pushes whose answer is still held. */
  openNow(): number;
  reset(): void;
  close(): Promise<void>;
}

const MAX_LIMIT = 250;
const DEFAULT_LIMIT = 100;

export async function startN8nServer(opts: { apiKey?: string } & Pick<StandInOptions, "port"> = {}): Promise<N8nServer> {
  const apiKey = opts.apiKey ?? `n8n_api_${crypto.randomBytes(16).toString("hex")}`;
  const workflows = new Map<string, N8nWorkflow>();
  const pushes: RecordedPush[] = [];
  const apiCalls: string[] = [];
  let webhookFaults: { status: number; times: number; retryAfter?: number } | null = null;
  let apiFaults: { status: number; times: number } | null = null;
  let held: Promise<void> | null = null;
  let answerDelayMs = 0;
  let open = 0;
  let n = 0;

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  };

  const server = bodyServer(async (req, res, url, raw) => {
    const method = req.method ?? "GET";
    if (url.pathname.startsWith("/api/v1/")) {
      apiCalls.push(`${method} ${url.pathname}${url.search}`);
      if (req.headers["x-n8n-api-key"] !== apiKey) return send(res, 401, { message: "unauthorized" });
      if (apiFaults && apiFaults.times > 0) { apiFaults.times--; return send(res, apiFaults.status, { message: "Internal Server Error" }); }
      if (method === "GET" && url.pathname === "/api/v1/workflows") {
        const limitRaw = url.searchParams.get("limit");
        const limit = limitRaw === null ? DEFAULT_LIMIT : Number(limitRaw);
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return send(res, 400, { message: `request/query/limit must be <= ${MAX_LIMIT}` });
        const all = [...workflows.values()].sort((a, b) => a.id.localeCompare(b.id));
        let start = 0;
        const cursor = url.searchParams.get("cursor");
        if (cursor) {
          try {
            const c = JSON.parse(Buffer.from(cursor, "base64").toString("utf8")) as { lastId: string; limit: number };
            start = all.findIndex((w) => w.id > c.lastId);
            if (start < 0) start = all.length;
          } catch { return send(res, 400, { message: "An invalid cursor was provided" }); }
        }
        const data = all.slice(start, start + limit);
        const more = start + limit < all.length;
        const nextCursor = more ? Buffer.from(JSON.stringify({ lastId: data[data.length - 1].id, limit })).toString("base64") : null;
        return send(res, 200, { data, nextCursor });
      }
      const one = /^\/api\/v1\/workflows\/([^/]+)$/.exec(url.pathname);
      if (method === "GET" && one) {
        const w = workflows.get(decodeURIComponent(one[1]));
        return w ? send(res, 200, w) : send(res, 404, { message: "Not Found" });
      }
      return send(res, 404, { message: "not found" });
    }
    const hook = /^\/webhook\/(.+)$/.exec(url.pathname);
    if (hook) {
      if (held) await held;
      const path = decodeURIComponent(hook[1]);
      const target = [...workflows.values()].find((w) => w.active && w.nodes.some((nd) => nd.type === "n8n-nodes-base.webhook" && !nd.disabled && nd.parameters.path === path
        && [nd.parameters.httpMethod ?? "GET"].flat().map(String).includes(method)));
      if (!target) {
        return send(res, 404, {
          code: 404,
          message: `The requested webhook "${method} ${path}" is not registered.`,
          hint: "The workflow must be active for a production URL to run successfully. You can activate the workflow using the toggle in the top-right of the editor. Note that unlike test URL calls, production URL calls aren't shown on the canvas (only in the executions list)",
        });
      }
      if (webhookFaults && webhookFaults.times > 0) {
        webhookFaults.times--;
        const h: Record<string, string> = webhookFaults.status === 429 && webhookFaults.retryAfter !== undefined ? { "retry-after": String(webhookFaults.retryAfter) } : {};
        return send(res, webhookFaults.status, { code: webhookFaults.status, message: webhookFaults.status === 429 ? "Too Many Requests" : "Error in workflow" }, h);
      }
      let body: any;
      try { body = JSON.parse(raw); } catch { body = raw; }
      pushes.push({ method, path, headers: req.headers, body, at: new Date() });
      if (answerDelayMs > 0) {
        open++;
        await new Promise((r) => setTimeout(r, answerDelayMs));
        open--;
        if (res.destroyed) return;
      }
      return send(res, 200, { message: "Workflow was started" });
    }
    return send(res, 404, { message: "not found" });
  });

  const url = await listenLocal(server, opts.port);
  const now = () => new Date().toISOString();

  return {
    url,
    apiKey,
    pushes,
    apiCalls,
    addWorkflow(w) {
      const id = w.id ?? `wf${String(++n).padStart(4, "0")}${crypto.randomBytes(4).toString("hex")}`;
      const nodes: N8nNode[] = [];
      if (w.webhook) {
        nodes.push({
          id: crypto.randomUUID(), name: "Webhook", type: "n8n-nodes-base.webhook", typeVersion: 2, position: [0, 0], webhookId: crypto.randomUUID(),
          parameters: { path: w.webhook.path, ...(w.webhook.method === undefined ? { httpMethod: "POST" } : { httpMethod: w.webhook.method }), options: {} },
          ...(w.webhook.disabled ? { disabled: true } : {}),
        });
      } else {
        nodes.push({ id: crypto.randomUUID(), name: "Schedule Trigger", type: "n8n-nodes-base.scheduleTrigger", typeVersion: 1.2, position: [0, 0], parameters: { rule: { interval: [{}] } } });
      }
      nodes.push({ id: crypto.randomUUID(), name: "Set", type: "n8n-nodes-base.set", typeVersion: 3.4, position: [200, 0], parameters: {} });
      const wf: N8nWorkflow = {
        id, name: w.name, active: w.active ?? true, createdAt: now(), updatedAt: now(),
        tags: (w.tags ?? []).map((t, i) => ({ id: `tag${i}`, name: t })), nodes, connections: {}, settings: { executionOrder: "v1" },
      };
      workflows.set(id, wf);
      return wf;
    },
    workflow: (id) => workflows.get(id),
    setActive(id, active) { workflows.get(id)!.active = active; },
    failWebhook(status, times, retryAfterSeconds) { webhookFaults = { status, times, retryAfter: retryAfterSeconds }; },
    failApi(status, times) { apiFaults = { status, times }; },
    holdWebhooks() {
      let release!: () => void;
      held = new Promise<void>((r) => { release = r; });
      return () => { held = null; release(); };
    },
    slowWebhooks(ms) { answerDelayMs = ms; },
    openNow: () => open,
    reset() { answerDelayMs = 0; workflows.clear(); pushes.length = 0; apiCalls.length = 0; webhookFaults = null; apiFaults = null; held = null; },
    close: () => new Promise<void>((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}
