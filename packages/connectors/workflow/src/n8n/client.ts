import { ProviderError } from "@trendgate/connector-core";
import type { OutboundResult } from "@trendgate/delivery";
import type { PushTrigger, Workflow, WorkflowClient, WorkflowClientContext } from "../kind.ts";

// n8n's public API v1 (X-N8N-API-KEY; cursor pages `{data, nextCursor}`, at most 250 a page) and its webhook URLs.
// One call per method, no retries here: the gateway answers the user, the outbox decides when to try a push again.

const PROVIDER = "n8n";
const MAX_PAGE = 250;
export const WEBHOOK_NODE = "n8n-nodes-base.webhook";
/** Methods whose request carries our JSON body; a trigger listening only to GET/HEAD/DELETE cannot receive pushes. */
const BODY_METHODS = ["POST", "PUT", "PATCH"];

type N8nNode = { name?: string; type?: string; disabled?: boolean; webhookId?: string; parameters?: { path?: unknown; httpMethod?: unknown; multipleMethods?: unknown } };
type N8nWorkflow = { id?: unknown; name?: unknown; active?: unknown; tags?: { name?: string }[]; nodes?: N8nNode[] };

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
    return { nodeName: n.name ?? "Webhook", method, path, url: productionUrl(baseUrl, path) };
  }
  return null;
}

const json = (r: OutboundResult): any => { try { return JSON.parse(r.body); } catch { return undefined; } };
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

/** n8n's own error text, when the body has one (`{message}`; webhooks add `hint`). */
const saidBy = (r: OutboundResult) => { const b = json(r); return typeof b?.message === "string" ? b.message.slice(0, 300) : null; };

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
      trigger: pushTriggerOf(this.base, w.nodes),
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

  async listWorkflows(p: { cursor?: string; limit: number }) {
    const body = await this.page("listing workflows", p);
    return { workflows: body.data.map((w) => this.toWorkflow(w)), nextCursor: body.nextCursor || null };
  }

  async getWorkflow(id: string) {
    const body = await this.get(`reading workflow ${id}`, `/workflows/${encodeURIComponent(id)}`);
    if (body.id === undefined || !Array.isArray(body.nodes)) throw notN8n(`reading workflow ${id}`, "the answer is not a workflow", 200);
    return this.toWorkflow(body);
  }

  async push(url: string, body: string, headers: Record<string, string>, method = "POST") {
    const m = (BODY_METHODS.includes(method) ? method : "POST") as "POST" | "PUT" | "PATCH";
    const r = await this.ctx.request(m, url, { body, headers: { "content-type": "application/json", ...headers } });
    if (r.status !== null && r.status >= 200 && r.status < 300) return { status: r.status };
    const what = "pushing to the workflow";
    if (r.status === 404) {
      // n8n: `The requested webhook "POST path" is not registered.` -- the workflow is inactive, or the path is wrong.
      const said = saidBy(r);
      return Promise.reject(new ProviderError(PROVIDER, "bad_request",
        `${what}: n8n has no active webhook at this URL (404${said ? `: ${said}` : ""}); activate the workflow in n8n (production webhook URLs only answer while it is active), or check the push URL`,
        { status: 404, providerCode: "webhook_not_registered" }));
    }
    if (r.status === 401 || r.status === 403)
      throw new ProviderError(PROVIDER, "bad_request", `${what}: the Webhook node refused the request (${r.status}); turn its authentication off or match it`, { status: r.status, providerCode: "webhook_auth" });
    throw apiError(what, r);
  }
}
