import { ProviderError } from "@trendgate/connector-core";
import type { OutboundResult } from "@trendgate/delivery";
import { EVENT_ID_HEADER } from "../payload.ts";
import type { PushTrigger, TriggerAuthentication, Workflow, WorkflowClient, WorkflowClientContext, WorkflowRuns } from "../kind.ts";

// n8n's public API v1 (X-N8N-API-KEY; cursor pages `{data, nextCursor}`, at most 250 a page) and its webhook URLs.
// One call per method, no retries here: the gateway answers the user, the outbox decides when to try a push again.

const PROVIDER = "n8n";
const MAX_PAGE = 250;
/** n8n pages fetched at most for one of our pages (n8n's cursor keeps the page size it was made with). */
const MAX_PAGES_PER_LISTING = 10;
/**
 * After n8n answered its start-up 404 (it listens but has not re-registered its active workflows' webhooks yet, 5 to
 * 12 s after a (re)start), the next attempt is due within this long, not after the schedule's minutes.
 */
export const NOT_READY_RETRY_MS = 5_000;
/**
 * While n8n runs its database migrations it answers every request `200 n8n is starting up. Please wait` and runs
 * nothing: retried within this long (migrations can take minutes, so not as often as the 404 above).
 */
export const STARTING_UP_RETRY_MS = 30_000;
/** Either start-up answer is not tried again sooner than this: each try spends one of the schedule's attempts. */
const START_UP_MIN_WAIT_MS = 2_000;
/** Executions per page when looking for our pushes: each carries its run's data, so pages stay small. */
const EXECUTIONS_PAGE = 25;
/** Pages read at most per look; what lies further back is reported as not looked at (`checkedSince`). */
const MAX_EXECUTION_PAGES = 40;
/** n8n's clock and ours may differ: runs are looked for this far before the oldest push. */
const CLOCK_SLACK_MS = 5 * 60_000;
export const WEBHOOK_NODE = "n8n-nodes-base.webhook";
/** Methods whose request carries our JSON body; a trigger listening only to GET/HEAD/DELETE cannot receive pushes. */
const BODY_METHODS = ["POST", "PUT", "PATCH"];

type N8nNode = { name?: string; type?: string; disabled?: boolean; webhookId?: string; parameters?: { path?: unknown; httpMethod?: unknown; multipleMethods?: unknown; authentication?: unknown } };
/** The Webhook node's `authentication` parameter (its credential, and so the header's value, is not in the API). */
const AUTHENTICATION: Record<string, TriggerAuthentication> = { headerAuth: "header", basicAuth: "basic", jwtAuth: "jwt" };
// `activeVersion` (n8n 1.1xx): the published version, whose nodes are the ones n8n registered; `nodes` may be a draft.
type N8nWorkflow = { id?: unknown; name?: unknown; active?: unknown; tags?: { name?: string }[]; nodes?: N8nNode[]; activeVersion?: { nodes?: N8nNode[] } | null };

/** Our listing cursor over n8n's: n8n's cursor of a page and how many of that page we already returned. */
type ListCursor = { c: string | null; skip: number };
const encodeCursor = (c: ListCursor) => JSON.stringify(c);
function decodeCursor(raw: string): ListCursor {
  try {
    const c = JSON.parse(raw) as ListCursor;
    if ((c.c === null || typeof c.c === "string") && Number.isInteger(c.skip) && c.skip >= 0) return c;
  } catch { /* below */ }
  throw new ProviderError(PROVIDER, "bad_request", "listing workflows: not a cursor of this listing", { providerCode: "invalid_cursor" });
}

/** The instance's origin (and any path prefix it is served under), from what the user gave, with or without /api/v1. */
export function instanceBase(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, "").replace(/\/api\/v1$/, "").replace(/\/+$/, "");
}

/** The production URL of a Webhook node: `{instance}/webhook/{path}` (the test URL /webhook-test/ is useless to a server). */
export function productionUrl(baseUrl: string, path: string): string {
  return `${instanceBase(baseUrl)}/webhook/${path.replace(/^\/+/, "")}`;
}

/** The first enabled Webhook trigger that accepts a JSON body, with its production URL. */
export function pushTriggerOf(baseUrl: string, nodes: N8nNode[] | undefined): PushTrigger | null {
  for (const n of nodes ?? []) {
    if (n.type !== WEBHOOK_NODE || n.disabled) continue;
    const path = typeof n.parameters?.path === "string" ? n.parameters.path.trim() : "";
    // Dynamic paths (`:id` segments) are served under the node's webhookId and need values we do not have.
    if (!path || path.includes(":")) continue;
    // n8n's node defaults to GET; "Allow Multiple HTTP Methods" gives an array.
    const raw = n.parameters?.httpMethod;
    const methods = (Array.isArray(raw) ? raw : [raw ?? "GET"]).map((m) => String(m).toUpperCase());
    const method = BODY_METHODS.find((m) => methods.includes(m));
    if (!method) continue;
    const authentication = AUTHENTICATION[String(n.parameters?.authentication ?? "none")] ?? "none";
    return { nodeName: n.name ?? "Webhook", method, path, url: productionUrl(baseUrl, path), authentication };
  }
  return null;
}

const json = (r: OutboundResult): any => { try { return JSON.parse(r.body); } catch { return undefined; } };
/** n8n's answer to anything while its migrations run (a 200 that ran nothing). */
const startingUp = (r: OutboundResult) => r.status !== null && r.status >= 200 && r.status < 300 && /^\s*n8n is starting up/i.test(r.body);
const header = (r: OutboundResult, name: string) => { const v = r.headers[name]; return Array.isArray(v) ? v[0] : v; };

/** Retry-After in seconds or as an HTTP date, in ms. */
export function retryAfterMs(r: OutboundResult): number | undefined {
  const v = header(r, "retry-after");
  if (!v) return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * n8n's own error text: `{message}` (webhooks add `hint`), or a short plain-text body (the Webhook node's own
 * authentication answers `Authorization data is wrong!` as text); never an HTML page.
 */
const saidBy = (r: OutboundResult) => {
  const b = json(r);
  if (typeof b?.message === "string") return b.message.slice(0, 300);
  const t = b === undefined ? r.body.trim() : "";
  return t && !t.startsWith("<") && t.length <= 300 ? t : null;
};

const startingUpError = (what: string) => new ProviderError(PROVIDER, "unavailable",
  `${what}: n8n answered 200 "n8n is starting up. Please wait" (its database migrations are running) and ran nothing; trying again shortly`,
  { status: 200, providerCode: "starting_up", retryAfterMs: START_UP_MIN_WAIT_MS, retryWithinMs: STARTING_UP_RETRY_MS });

/** The event id a run's trigger received: the header in its first item (n8n lower-cases header names). */
function eventIdOfRun(ex: { data?: { resultData?: { runData?: Record<string, { data?: { main?: { json?: { headers?: Record<string, unknown> } }[][] } }[]> } } }): string | null {
  const name = EVENT_ID_HEADER.toLowerCase();
  for (const runs of Object.values(ex.data?.resultData?.runData ?? {})) {
    const id = runs?.[0]?.data?.main?.[0]?.[0]?.json?.headers?.[name];
    if (typeof id === "string" && id) return id;
  }
  return null;
}

/** An API answer that is not a success, as a ProviderError. */
function apiError(what: string, r: OutboundResult): ProviderError {
  const status = r.status;
  if (status === null)
    return new ProviderError(PROVIDER, "unavailable", `${what}: the n8n instance is not reachable (${r.error?.code ?? r.error?.name ?? "network error"}: ${r.error?.message ?? ""})`.trim(), { status: null, providerCode: "unreachable" });
  const said = saidBy(r);
  const detail = { status, providerCode: said ?? undefined };
  if (status === 401 || status === 403) return new ProviderError(PROVIDER, "unauthorized", `${what}: n8n refused the API key (${status}${said ? ` ${said}` : ""})`, detail);
  if (status === 429) return new ProviderError(PROVIDER, "rate_limited", `${what}: n8n is rate limiting (429)`, { ...detail, retryAfterMs: retryAfterMs(r) });
  if (status >= 500) return new ProviderError(PROVIDER, "unavailable", `${what}: n8n answered ${status}${said ? ` (${said})` : ""}`, detail);
  if (status === 404) return new ProviderError(PROVIDER, "not_found", `${what}: not found (404${said ? ` ${said}` : ""})`, detail);
  return new ProviderError(PROVIDER, "bad_request", `${what}: n8n answered ${status}${said ? ` (${said})` : ""}`, detail);
}

const notN8n = (what: string, why: string, status: number | null) =>
  new ProviderError(PROVIDER, "bad_request", `${what}: this address does not answer as the n8n public API (${why}); give the instance's address, e.g. https://<name>.app.n8n.cloud`, { status, providerCode: "not_n8n_api" });

export class N8nClient implements WorkflowClient {
  private readonly base: string;

  constructor(private readonly ctx: WorkflowClientContext) {
    this.base = instanceBase(ctx.baseUrl);
  }

  private async get(what: string, pathAndQuery: string): Promise<any> {
    const r = await this.ctx.request("GET", `${this.base}/api/v1${pathAndQuery}`, { headers: { "X-N8N-API-KEY": this.ctx.apiKey, accept: "application/json" } });
    if (r.status === null || r.status < 200 || r.status >= 300) throw apiError(what, r);
    if (startingUp(r)) throw startingUpError(what);
    const body = json(r);
    if (body === undefined || typeof body !== "object" || body === null) throw notN8n(what, `status ${r.status}, not a JSON object`, r.status);
    return body;
  }

  private toWorkflow(w: N8nWorkflow): Workflow {
    return {
      id: String(w.id ?? ""),
      name: typeof w.name === "string" ? w.name : "",
      active: w.active === true,
      tags: (w.tags ?? []).map((t) => t?.name).filter((n): n is string => typeof n === "string"),
      trigger: pushTriggerOf(this.base, Array.isArray(w.activeVersion?.nodes) ? w.activeVersion.nodes : w.nodes),
    };
  }

  private async page(what: string, p: { cursor?: string; limit: number }) {
    const q = new URLSearchParams({ limit: String(Math.max(1, Math.min(p.limit, MAX_PAGE))) });
    if (p.cursor) q.set("cursor", p.cursor);
    const body = await this.get(what, `/workflows?${q}`);
    if (!Array.isArray(body.data) || !("nextCursor" in body)) throw notN8n(what, "the answer has no `data` list and `nextCursor`", 200);
    return body as { data: N8nWorkflow[]; nextCursor: string | null };
  }

  async verify() {
    try {
      await this.page("checking the API key", { limit: 1 });
    } catch (err) {
      // The path does not exist there: some other server (or the API is off, as on n8n Cloud trials).
      if (err instanceof ProviderError && err.kind === "not_found") throw notN8n("checking the API key", "GET /api/v1/workflows answered 404", 404);
      throw err;
    }
  }

  /**
   * Up to `limit` workflows from our cursor on. n8n's cursor carries the page size it was made with (a `limit` sent
   * with it is ignored), so a page may hold more or fewer than asked: we take what we need, go on to n8n's next page
   * while short, and when we stop inside a page our cursor says where (that page is read again for the next one).
   */
  async listWorkflows(p: { cursor?: string; limit: number }) {
    let at: ListCursor = p.cursor ? decodeCursor(p.cursor) : { c: null, skip: 0 };
    const out: N8nWorkflow[] = [];
    for (let pages = 0; pages < MAX_PAGES_PER_LISTING; pages++) {
      const body = await this.page("listing workflows", { cursor: at.c ?? undefined, limit: p.limit });
      const rest = body.data.slice(at.skip);
      const taken = rest.slice(0, p.limit - out.length);
      out.push(...taken);
      if (taken.length < rest.length) { at = { c: at.c, skip: at.skip + taken.length }; break; }
      if (!body.nextCursor) return { workflows: out.map((w) => this.toWorkflow(w)), nextCursor: null };
      at = { c: body.nextCursor, skip: 0 };
      if (out.length >= p.limit) break;
    }
    return { workflows: out.map((w) => this.toWorkflow(w)), nextCursor: encodeCursor(at) };
  }

  async getWorkflow(id: string) {
    const body = await this.get(`reading workflow ${id}`, `/workflows/${encodeURIComponent(id)}`);
    if (body.id === undefined || !Array.isArray(body.nodes)) throw notN8n(`reading workflow ${id}`, "the answer is not a workflow", 200);
    return this.toWorkflow(body);
  }

  async push(url: string, body: string, headers: Record<string, string>, method = "POST") {
    const m = (BODY_METHODS.includes(method) ? method : "POST") as "POST" | "PUT" | "PATCH";
    const r = await this.ctx.request(m, url, { body, headers: { "content-type": "application/json", ...headers } });
    if (r.status !== null && r.status >= 200 && r.status < 300 && !startingUp(r)) return { status: r.status };
    throw pushError(r);
  }

  /**
   * Our pushes among the workflow's executions (GET /executions?workflowId&includeData=true, newest first), matched by
   * the X-Trendgate-Event-Id header in the trigger's output. n8n lists finished runs only (running ones are left out),
   * and only those it saved (the workflow's "save successful production executions" setting).
   */
  async findRuns(workflowId: string, eventIds: ReadonlySet<string>, since: Date): Promise<WorkflowRuns> {
    const what = `reading workflow ${workflowId}'s executions`;
    const ran = new Map<string, string>();
    const from = since.getTime() - CLOCK_SLACK_MS;
    let cursor: string | null = null;
    let oldest = Infinity;
    for (let pages = 0; pages < MAX_EXECUTION_PAGES; pages++) {
      const q = new URLSearchParams({ workflowId, includeData: "true", limit: String(EXECUTIONS_PAGE) });
      if (cursor) q.set("cursor", cursor);
      const body = await this.get(what, `/executions?${q}`);
      if (!Array.isArray(body.data) || !("nextCursor" in body)) throw notN8n(what, "the answer has no `data` list and `nextCursor`", 200);
      for (const ex of body.data) {
        const id = eventIdOfRun(ex);
        if (id && eventIds.has(id) && !ran.has(id)) ran.set(id, String(ex.id));
        const started = Date.parse(ex.startedAt);
        if (started < oldest) oldest = started;
      }
      if (ran.size === eventIds.size || !body.nextCursor || oldest < from) return { ran, checkedSince: since };
      cursor = body.nextCursor;
    }
    return { ran, checkedSince: new Date(Number.isFinite(oldest) ? oldest + CLOCK_SLACK_MS : Date.now()) };
  }
}

/**
 * What a webhook's answer means, by n8n's behaviour rather than the status alone:
 * - 200 `n8n is starting up. Please wait` (text): its migrations are running and nothing ran: retried shortly.
 * - 404 with an HTML page (`Cannot POST /webhook/...`): n8n is listening but has not re-registered its active
 *   workflows' webhooks yet (5 to 12 s after a start): retried within seconds.
 * - 404 with n8n's JSON (`The requested webhook "POST path" is not registered.`): no active workflow has this webhook
 *   (inactive, or its path changed): not retried.
 * - 500 `{"message":"Error in workflow"}`: the workflow ran and failed; and a timeout once the request was sent: it may
 *   still be running. Either way it may have acted: not resent blindly (mayHaveActed).
 * - 401/403: the Webhook node's own authentication refused us.
 */
export function pushError(r: OutboundResult): ProviderError {
  const what = "pushing to the workflow";
  const said = saidBy(r);
  if (startingUp(r)) return startingUpError(what);
  if (r.status === 404 && json(r) === undefined)
    return new ProviderError(PROVIDER, "unavailable",
      `${what}: n8n answered 404 without its JSON (a start-up page): it is starting and has not registered its active webhooks yet; trying again shortly`,
      { status: 404, providerCode: "webhook_not_ready", retryAfterMs: START_UP_MIN_WAIT_MS, retryWithinMs: NOT_READY_RETRY_MS });
  if (r.status === 404)
    return new ProviderError(PROVIDER, "not_found",
      `${what}: n8n has no active webhook at this URL (404${said ? `: ${said}` : ""}); the workflow is not active in n8n: activate the workflow (production webhook URLs only answer while it is active), or the push URL is not its webhook`,
      { status: 404, providerCode: "webhook_not_registered" });
  if (r.status === 401 || r.status === 403)
    return new ProviderError(PROVIDER, "bad_request",
      `${what}: the Webhook node refused the request (${r.status}${said ? ` ${said}` : ""}); give the selection the credential its authentication expects (push_auth), or turn that off and verify our signature`,
      { status: r.status, providerCode: "webhook_auth" });
  if (r.status === 500 && said !== null && /error in workflow/i.test(said))
    return new ProviderError(PROVIDER, "unavailable",
      `${what}: the workflow ran and failed (500 ${said}); not sent again automatically, since it may have acted: look at the execution in n8n, then replay the push if it should run again`,
      { status: 500, providerCode: "workflow_error", mayHaveActed: true });
  if (r.status === null && r.sent && r.error?.code === "ETIMEDOUT")
    return new ProviderError(PROVIDER, "unavailable",
      `${what}: n8n took the request but gave no answer in time (${r.error.message}); the workflow may be running (a webhook that answers when its last node finishes holds the connection): not sent again automatically; look at its executions in n8n, then replay the push if it did not run`,
      { status: null, providerCode: "no_answer", mayHaveActed: true });
  return apiError(what, r);
}
