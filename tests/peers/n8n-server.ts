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
// Executions: each run is recorded (`executions`, `pushes` for its request) and GET /api/v1/executions lists them as
// n8n does: newest first, `workflowId`, `status`, `includeData` (the run's data, whose Webhook node output carries
// the request's lower-cased headers), `limit` (100, at most 250) and a cursor `{lastId, limit}` whose own limit wins;
// running executions are left out. A request the webhook took but never ran (dropAcknowledged, a stop) has none.
// As a real n8n 1.x behaves across a (re)start (restart()): a SIGTERM keeps it taking webhooks for `graceMs`
// (0.8-10 s measured), and the last one it took before stopping never runs; once listening again it first runs its
// database migrations for `migratingMs`, answering everything `200 n8n is starting up. Please wait` (text) and
// running nothing; then for `notReadyMs` (5-12 s measured) it answers every webhook 404 with an HTML page (`Cannot
// POST /webhook/<path>`) until it has registered its active workflows' webhooks;
// a failing workflow runs (counted in `pushes`, its executions) and then answers `500 {"message":"Error in
// workflow"}`; a slow one holds the connection for `runMs` while it runs (counted when it starts); a Webhook node can
// require a header or Basic auth, refused in plain text (401 `Authorization is required!`, 403 `Authorization data is
// wrong!`, with WWW-Authenticate) as the node answers; the listing's cursor carries the page size it was made with (a
// later `limit` is ignored); workflow objects carry `activeVersionId` and `activeVersion` (the published version, null
// while inactive).

export interface N8nNode {
  id: string; name: string; type: string; typeVersion: number; position: [number, number]; parameters: Record<string, unknown>; webhookId?: string; disabled?: boolean;
  credentials?: Record<string, { id: string; name: string }>;
}
export interface N8nWorkflow { id: string; name: string; active: boolean; createdAt: string; updatedAt: string; tags: { id: string; name: string }[]; nodes: N8nNode[]; connections: Record<string, unknown>; settings: Record<string, unknown> }

export interface RecordedPush { method: string; path: string; headers: http.IncomingHttpHeaders; body: any; at: Date }

/** One run as n8n's public API shows it (`data` with includeData only). */
export interface N8nExecution {
  id: string; finished: boolean; mode: "webhook"; retryOf: null; retrySuccessId: null; startedAt: string; stoppedAt: string | null;
  workflowId: string; waitTill: null; status: "running" | "success" | "error"; data: Record<string, unknown>;
}

export interface N8nServer {
  url: string;
  apiKey: string;
  /** Adds a workflow; `webhook` gives it a Webhook trigger node (path, method; default POST). */
  addWorkflow(w: {
    name: string; active?: boolean; tags?: string[]; id?: string;
    webhook?: { path: string; method?: string | string[]; disabled?: boolean; headerAuth?: { name: string; value: string }; basicAuth?: { user: string; password: string }; jwtAuth?: boolean } | null;
    /** The workflow fails when it runs: answered `500 Error in workflow` after the execution. */
    fails?: boolean;
    /** The workflow runs this long, holding the connection ("respond when the last node finishes"). */
    runMs?: number;
  }): N8nWorkflow;
  /** Changes a workflow's webhook path and publishes it (n8n registers the new path, the old one answers 404). */
  setWebhookPath(id: string, path: string): void;
  /**
   * A restart as n8n goes through one: SIGTERM (it keeps taking webhooks for `graceMs`, default 800, and the last it
   * took never runs; `kill`: none of that, it stops at once), open connections cut, down `downMs`, then listening on
   * the same port: `migratingMs` (default 0) of `200 n8n is starting up`, then `notReadyMs` (default 5-12 s) of
   * start-up 404s.
   */
  restart(opts?: { downMs?: number; notReadyMs?: number; migratingMs?: number; graceMs?: number; kill?: boolean }): Promise<void>;
  /** Ends the start-up phases now (migrations done, webhooks registered), for a test that waits for an answer first. */
  finishStartUp(): void;
  workflow(id: string): N8nWorkflow | undefined;
  setActive(id: string, active: boolean): void;
  /** Requests a webhook ran (an execution started), in order. */
  pushes: RecordedPush[];
  /** Requests a webhook answered 2xx, whether or not they ran. */
  acknowledged: RecordedPush[];
  /** Every execution, running ones included. */
  executions: N8nExecution[];
  /** The next `times` webhook requests are answered `Workflow was started` but never run (lost as n8n stops). */
  dropAcknowledged(times: number): void;
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

/** How a workflow behaves when its webhook runs it (not part of n8n's workflow object). */
interface Behaviour { fails?: boolean; runMs?: number; headerAuth?: { name: string; value: string }; basicAuth?: { user: string; password: string }; jwtAuth?: boolean }

export async function startN8nServer(opts: {
  apiKey?: string;
  /** The start-up phases of the first start: migrations (`200 n8n is starting up`), then start-up 404s (default 0 each). */
  migratingMs?: number; notReadyMs?: number;
} & Pick<StandInOptions, "port"> = {}): Promise<N8nServer> {
  const apiKey = opts.apiKey ?? `n8n_api_${crypto.randomBytes(16).toString("hex")}`;
  const workflows = new Map<string, N8nWorkflow>();
  const behaviour = new Map<string, Behaviour>();
  let migratedAt = Date.now() + (opts.migratingMs ?? 0);
  let readyAt = migratedAt + (opts.notReadyMs ?? 0);
  const pushes: RecordedPush[] = [];
  const acknowledged: RecordedPush[] = [];
  const executions: N8nExecution[] = [];
  let executionIds = 0;
  let dropNext = 0;
  /** While stopping (SIGTERM): the run of the last request taken, held until another comes (then it runs) or the stop. */
  let stopping = false;
  let heldRun: (() => void) | null = null;
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
  // The Webhook node's own authentication refuses in plain text, with a challenge, whatever the code.
  const refuse = (res: http.ServerResponse, status: 401 | 403) => {
    res.writeHead(status, { "WWW-Authenticate": 'Basic realm="Webhook"' });
    res.end(status === 401 ? "Authorization is required!" : "Authorization data is wrong!");
  };

  /** Starts a run of `wf` for a webhook request: its execution (running until `finish`) and the request in `pushes`. */
  function startRun(wf: N8nWorkflow, push: RecordedPush, query: Record<string, string>, url: string) {
    pushes.push(push);
    const hook = wf.nodes.find((nd) => nd.type === "n8n-nodes-base.webhook")!;
    const started = push.at;
    const ex: N8nExecution = {
      id: String(++executionIds), finished: false, mode: "webhook", retryOf: null, retrySuccessId: null, startedAt: started.toISOString(), stoppedAt: null,
      workflowId: wf.id, waitTill: null, status: "running",
      data: {
        startData: {},
        resultData: {
          runData: {
            [hook.name]: [{
              startTime: started.getTime(), executionTime: 1, executionStatus: "success", source: [],
              data: { main: [[{ json: { headers: push.headers, params: {}, query, body: push.body, webhookUrl: url, executionMode: "production" }, pairedItem: { item: 0 } }]] },
            }],
          },
          lastNodeExecuted: hook.name,
        },
      },
    };
    executions.push(ex);
    return (failed: boolean) => Object.assign(ex, { finished: !failed, status: failed ? "error" : "success", stoppedAt: new Date().toISOString() });
  }

  const server = bodyServer(async (req, res, url, raw) => {
    const method = req.method ?? "GET";
    if (Date.now() < migratedAt) { // n8n listens before its migrations end, and answers everything with this (Express's res.send)
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end("n8n is starting up. Please wait");
    }
    if (url.pathname.startsWith("/api/v1/")) {
      apiCalls.push(`${method} ${url.pathname}${url.search}`);
      if (req.headers["x-n8n-api-key"] !== apiKey) return send(res, 401, { message: "unauthorized" });
      if (apiFaults && apiFaults.times > 0) { apiFaults.times--; return send(res, apiFaults.status, { message: apiFaults.status === 401 ? "unauthorized" : "Internal Server Error" }); }
      if (method === "GET" && url.pathname === "/api/v1/workflows") {
        const limitRaw = url.searchParams.get("limit");
        const limit = limitRaw === null ? DEFAULT_LIMIT : Number(limitRaw);
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return send(res, 400, { message: `request/query/limit must be <= ${MAX_LIMIT}` });
        const all = [...workflows.values()].sort((a, b) => a.id.localeCompare(b.id));
        let start = 0;
        let size = limit;
        const cursor = url.searchParams.get("cursor");
        if (cursor) {
          try {
            const c = JSON.parse(Buffer.from(cursor, "base64").toString("utf8")) as { lastId: string; limit: number };
            start = all.findIndex((w) => w.id > c.lastId);
            if (start < 0) start = all.length;
            size = c.limit; // as n8n: the cursor's own page size wins over the query's limit
          } catch { return send(res, 400, { message: "An invalid cursor was provided" }); }
        }
        const data = all.slice(start, start + size);
        const more = start + size < all.length;
        const nextCursor = more ? Buffer.from(JSON.stringify({ lastId: data[data.length - 1].id, limit: size })).toString("base64") : null;
        return send(res, 200, { data, nextCursor });
      }
      if (method === "GET" && url.pathname === "/api/v1/executions") {
        const cursor = url.searchParams.get("cursor");
        let limit = url.searchParams.get("limit") === null ? DEFAULT_LIMIT : Number(url.searchParams.get("limit"));
        let lastId = Infinity;
        if (cursor) {
          try {
            const c = JSON.parse(Buffer.from(cursor, "base64").toString("utf8")) as { lastId: string; limit: number };
            lastId = Number(c.lastId);
            limit = c.limit; // the cursor's own page size wins
          } catch { return send(res, 400, { message: "An invalid cursor was provided" }); }
        }
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return send(res, 400, { message: `request/query/limit must be <= ${MAX_LIMIT}` });
        const workflowId = url.searchParams.get("workflowId");
        const status = url.searchParams.get("status");
        const withData = url.searchParams.get("includeData") === "true";
        const all = executions
          .filter((e) => e.status !== "running" && (!workflowId || e.workflowId === workflowId) && (!status || e.status === status))
          .sort((a, b) => Number(b.id) - Number(a.id));
        const after = all.filter((e) => Number(e.id) < lastId);
        const page = after.slice(0, limit);
        const data = page.map(({ data: d, ...e }) => (withData ? { ...e, data: d } : e));
        const nextCursor = after.length > limit ? Buffer.from(JSON.stringify({ lastId: page[page.length - 1].id, limit })).toString("base64") : null;
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
      if (Date.now() < readyAt) { // listening, webhooks not registered yet: Express's own 404 page
        res.writeHead(404, { "content-type": "text/html; charset=utf-8" });
        return res.end(`<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot ${method} ${url.pathname}</pre>\n</body>\n</html>\n`);
      }
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
      const b = behaviour.get(target.id) ?? {};
      // The Webhook node's own authentication, as n8n answers it: a missing Basic header 401, a wrong credential 403.
      if (b.headerAuth && req.headers[b.headerAuth.name.toLowerCase()] !== b.headerAuth.value) return refuse(res, 403);
      if (b.basicAuth) {
        const given = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
        if (!given) return refuse(res, 401);
        if (Buffer.from(given, "base64").toString("utf8") !== `${b.basicAuth.user}:${b.basicAuth.password}`) return refuse(res, 403);
      }
      if (b.jwtAuth) return refuse(res, 403);
      if (webhookFaults && webhookFaults.times > 0) { // a failure before the workflow runs (an overloaded instance, a proxy)
        webhookFaults.times--;
        const h: Record<string, string> = webhookFaults.status === 429 && webhookFaults.retryAfter !== undefined ? { "retry-after": String(webhookFaults.retryAfter) } : {};
        return send(res, webhookFaults.status, { code: webhookFaults.status, message: webhookFaults.status === 429 ? "Too Many Requests" : "Service Unavailable" }, h);
      }
      let body: any;
      try { body = JSON.parse(raw); } catch { body = raw; }
      const push: RecordedPush = { method, path, headers: req.headers, body, at: new Date() };
      const run = () => startRun(target, push, Object.fromEntries(url.searchParams), `${base}/webhook/${path}`);
      if (dropNext > 0 || stopping) { // taken, answered, and lost with the process before it runs
        acknowledged.push(push);
        if (dropNext > 0) dropNext--;
        else { heldRun?.(); heldRun = () => run()(Boolean(b.fails)); }
        return send(res, 200, { message: "Workflow was started" });
      }
      const finish = run(); // the execution starts
      const waitMs = answerDelayMs + (b.runMs ?? 0);
      if (waitMs > 0) {
        open++;
        await new Promise((r) => setTimeout(r, waitMs));
        open--;
      }
      finish(Boolean(b.fails));
      if (res.destroyed) return;
      if (b.fails) return send(res, 500, { message: "Error in workflow" });
      acknowledged.push(push);
      return send(res, 200, { message: "Workflow was started" });
    }
    return send(res, 404, { message: "not found" });
  });

  const url = await listenLocal(server, opts.port);
  const base = url;
  const port = Number(new URL(url).port);
  const now = () => new Date().toISOString();
  // What n8n's API shows of the published version: the nodes it registered.
  const publish = (wf: N8nWorkflow) => {
    const versionId = crypto.randomUUID();
    Object.assign(wf, wf.active ? { activeVersionId: versionId, activeVersion: { versionId, workflowId: wf.id, nodes: structuredClone(wf.nodes), connections: wf.connections } } : { activeVersionId: null, activeVersion: null });
  };

  return {
    url,
    apiKey,
    pushes,
    acknowledged,
    executions,
    apiCalls,
    addWorkflow(w) {
      const id = w.id ?? `wf${String(++n).padStart(4, "0")}${crypto.randomBytes(4).toString("hex")}`;
      const nodes: N8nNode[] = [];
      const auth = w.webhook?.headerAuth ? { parameter: "headerAuth", credential: "httpHeaderAuth" }
        : w.webhook?.basicAuth ? { parameter: "basicAuth", credential: "httpBasicAuth" }
          : w.webhook?.jwtAuth ? { parameter: "jwtAuth", credential: "jwtAuth" } : null;
      if (w.webhook) {
        nodes.push({
          id: crypto.randomUUID(), name: "Webhook", type: "n8n-nodes-base.webhook", typeVersion: 2, position: [0, 0], webhookId: crypto.randomUUID(),
          parameters: {
            path: w.webhook.path, ...(w.webhook.method === undefined ? { httpMethod: "POST" } : { httpMethod: w.webhook.method }),
            ...(auth ? { authentication: auth.parameter } : {}), options: {},
          },
          // The node names its credential; the credential's secret never appears in the API.
          ...(auth ? { credentials: { [auth.credential]: { id: crypto.randomBytes(8).toString("hex"), name: `${auth.credential} account` } } } : {}),
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
      publish(wf);
      workflows.set(id, wf);
      behaviour.set(id, { fails: w.fails, runMs: w.runMs, headerAuth: w.webhook?.headerAuth, basicAuth: w.webhook?.basicAuth, jwtAuth: w.webhook?.jwtAuth });
      return wf;
    },
    workflow: (id) => workflows.get(id),
    setActive(id, active) { const wf = workflows.get(id)!; wf.active = active; publish(wf); },
    setWebhookPath(id, path) {
      const wf = workflows.get(id)!;
      for (const nd of wf.nodes) if (nd.type === "n8n-nodes-base.webhook") nd.parameters.path = path;
      wf.updatedAt = now();
      publish(wf);
    },
    async restart(r = {}) {
      if (!r.kill) { // SIGTERM: n8n goes on taking webhooks for a while; the last it took is lost with the process
        stopping = true;
        await new Promise((done) => setTimeout(done, r.graceMs ?? 800));
        stopping = false;
        heldRun = null;
      }
      await new Promise<void>((done) => { server.closeAllConnections?.(); server.close(() => done()); });
      await new Promise((done) => setTimeout(done, r.downMs ?? 0));
      migratedAt = Date.now() + (r.migratingMs ?? 0);
      readyAt = migratedAt + (r.notReadyMs ?? 5000 + Math.floor(Math.random() * 7000));
      await listenLocal(server, port);
    },
    finishStartUp() { migratedAt = 0; readyAt = 0; },
    dropAcknowledged(times) { dropNext = times; },
    failWebhook(status, times, retryAfterSeconds) { webhookFaults = { status, times, retryAfter: retryAfterSeconds }; },
    failApi(status, times) { apiFaults = { status, times }; },
    holdWebhooks() {
      let release!: () => void;
      held = new Promise<void>((r) => { release = r; });
      return () => { held = null; release(); };
    },
    slowWebhooks(ms) { answerDelayMs = ms; },
    openNow: () => open,
    reset() {
      answerDelayMs = 0; migratedAt = 0; readyAt = 0; workflows.clear(); behaviour.clear(); pushes.length = 0; acknowledged.length = 0; executions.length = 0;
      apiCalls.length = 0; webhookFaults = null; apiFaults = null; held = null; dropNext = 0;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}
