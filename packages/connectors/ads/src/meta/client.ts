import { ProviderError, pinnedVersion, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdAccount, AdsClient, AdsEntity, ChangeResult, EntityTargeting, ExecutorRequest, Page, ProviderCall, TargetingChange, TargetingField, TargetingItem } from "../kind.ts";
import { callError, graphErrorOf, graphMessage, kindOf, PROVIDER, providerCodeOf } from "./errors.ts";
import { manifest } from "./manifest.ts";
import { mergeInterests } from "./spec.ts";

// The Meta Marketing API client: campaigns and ad sets of `act_<id>` through Graph cursor pages,
// interest targeting read from each ad set's `targeting`, interests found through /search?type=adinterest. A write
// replaces an ad set's whole targeting spec, so each ad set gets ONE `POST /{adset_id}` carrying the spec read at
// preview with only the plan's changes merged in (spec.ts); nothing else (no budget or bid field) is ever sent. The
// dry run is the same call with execution_options=["validate_only"]. The token goes in the Authorization header,
// never in a URL (Graph's `paging.next` links carry it, so they are not followed: cursors are).

const MAX_PAGE = 100;
/** Interests a trend phrase resolves to when Meta has no interest of exactly that name. */
const MAX_MATCHES = 3;
/** The only field a planned write may carry. */
const WRITABLE = new Set(["targeting"]);

const digits = (accountId: string) => accountId.replace(/^act_/, "");
type Level = "campaign" | "ad_set";
const cursorOf = (c: { r: Level; a?: string }) => Buffer.from(JSON.stringify(c)).toString("base64url");
const parseCursor = (s?: string): { r: Level; a?: string } => {
  if (!s) return { r: "campaign" };
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as { r?: string; a?: string };
    if ((c.r === "campaign" || c.r === "ad_set") && (c.a === undefined || typeof c.a === "string")) return { r: c.r, a: c.a };
  } catch { /* fall through */ }
  throw new ProviderError(PROVIDER, "bad_request", "not a cursor of this listing (pass next_cursor back as given)");
};
const interestItem = (i: { id: unknown; name?: unknown }): TargetingItem => ({ key: String(i.id), id: String(i.id), text: String(i.name ?? i.id) });
const needInterests = (field: TargetingField) => {
  if (field !== "interests") throw new ProviderError(PROVIDER, "bad_request", `Meta Ads plans change interests only, not ${field}`);
};
const idOf = (id: string, what: string) => {
  if (!/^\d+$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `${what} id ${id}: digits expected`);
  return id;
};

interface Answer { status: number; body: any; headers: Headers; traceId: string | null }

export class MetaAdsClient implements AdsClient {
  private readonly base: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/${pinnedVersion(manifest, ctx.env)}/`;
  }

  private async send(method: "GET" | "POST", path: string, what: string, opts: { query?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const r = await http.fetch(what, url, { env: this.ctx.env, method, json: opts.body, headers: { authorization: `Bearer ${this.ctx.accessToken}` } });
    const body = r.text ? r.body : {};
    return { status: r.status, body, headers: r.headers, traceId: graphErrorOf(body)?.fbtrace_id ?? r.headers.get("x-fb-trace-id") };
  }

  private async get(path: string, query: Record<string, string>, what: string): Promise<any> {
    const r = await this.send("GET", path, what, { query });
    if (r.status !== 200 || !r.body || graphErrorOf(r.body)) throw callError(r.status, r.body, r.headers, what, r.traceId);
    return r.body;
  }

  async listAccounts(): Promise<AdAccount[]> {
    const out: AdAccount[] = [];
    let after: string | undefined;
    do {
      const page = await this.get("me/adaccounts", { fields: "id,name", limit: String(MAX_PAGE), ...(after ? { after } : {}) }, "me/adaccounts");
      for (const a of page.data ?? []) out.push({ id: String(a.id), name: a.name ? String(a.name) : null });
      after = page.paging?.next ? page.paging?.cursors?.after : undefined;
    } while (after);
    return out;
  }

  async listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>> {
    // Campaigns first, then ad sets (the level targeting lives on), each through Graph's own cursors.
    const act = `act_${idOf(digits(accountId), "ad account")}`;
    const c = parseCursor(opts.cursor);
    const limit = String(Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit) || 25)));
    const fields = c.r === "campaign" ? "id,name,status" : "id,name,status,campaign_id";
    const page = await this.get(`${act}/${c.r === "campaign" ? "campaigns" : "adsets"}`, { fields, limit, ...(c.a ? { after: c.a } : {}) }, `${act}/${c.r === "campaign" ? "campaigns" : "adsets"}`);
    const after: string | undefined = page.paging?.next ? page.paging?.cursors?.after : undefined;
    const data = (page.data ?? []).map((r: any): AdsEntity => c.r === "campaign"
      ? { id: String(r.id), name: String(r.name ?? ""), level: "campaign", parent_id: null, status: String(r.status ?? ""), targeting: [] }
      : { id: String(r.id), name: String(r.name ?? ""), level: "ad_set", parent_id: r.campaign_id ? String(r.campaign_id) : null, status: String(r.status ?? ""), targeting: ["interests"] });
    const next = after ? cursorOf({ r: c.r, a: after }) : c.r === "campaign" ? cursorOf({ r: "ad_set" }) : null;
    return { data, next_cursor: next };
  }

  async readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]> {
    needInterests(field);
    const account = digits(accountId);
    const out: EntityTargeting[] = [];
    for (const id of entityIds) {
      const s = await this.get(idOf(id, "ad set"), { fields: "account_id,targeting" }, `ad set ${id}`);
      if (String(s.account_id) !== account) throw new ProviderError(PROVIDER, "not_found", `ad set ${id} is not in ad account act_${account}`);
      const spec = s.targeting && typeof s.targeting === "object" ? s.targeting : {};
      // Groups of flexible_spec are AND-ed, interests within a group OR-ed: a plan reads and widens the first group
      // only; other groups (narrowing conditions someone set) and every other field are kept as they are.
      const first = Array.isArray(spec.flexible_spec) ? spec.flexible_spec[0] : undefined;
      const items = (Array.isArray(first?.interests) ? first.interests : []).map(interestItem);
      out.push({ entity_id: id, field, items, spec });
    }
    return out;
  }

  async resolveItems(_accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>> {
    needInterests(field);
    const out = new Map<string, TargetingItem[]>();
    for (const p of phrases) {
      const q = p.replace(/\s+/g, " ").trim();
      if (!q) { out.set(p, []); continue; }
      const r = await this.get("search", { type: "adinterest", q, limit: "10" }, "interest search");
      const hits: { id: unknown; name?: unknown }[] = Array.isArray(r.data) ? r.data : [];
      // An interest of exactly the trend's name is the match; otherwise Meta's best few (in its order).
      const exact = hits.filter((h) => String(h.name ?? "").toLowerCase() === q.toLowerCase());
      out.set(p, (exact.length ? exact.slice(0, 1) : hits.slice(0, MAX_MATCHES)).map(interestItem));
    }
    return out;
  }

  calls(_accountId: string, changes: TargetingChange[], prior: EntityTargeting[]): ProviderCall[] {
    const byEntity = new Map<string, TargetingChange[]>();
    for (const c of changes) {
      needInterests(c.field);
      byEntity.set(c.entity_id, [...(byEntity.get(c.entity_id) ?? []), c]);
    }
    return [...byEntity].map(([entityId, mine]) => {
      const before = prior.find((t) => t.entity_id === entityId && t.field === "interests");
      if (!before?.spec || typeof before.spec !== "object") {
        throw new ProviderError(PROVIDER, "bad_request", `ad set ${entityId}: its targeting spec as read at preview is needed (a write replaces the whole spec)`);
      }
      return {
        method: "POST", path: idOf(entityId, "ad set"), headers: { "content-type": "application/json" },
        body: { targeting: mergeInterests(before.spec as Record<string, unknown>, mine) }, change_ids: mine.map((c) => c.id),
      } satisfies ProviderCall;
    });
  }

  executorRequest(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest {
    return {
      method: call.method, url: new URL(call.path, this.base).toString(), headers: { "content-type": "application/json" },
      body: { ...(call.body as object), ...(opts.dryRun ? { execution_options: ["validate_only"] } : {}) }, credentials: "Authorization: Bearer <access token>",
    };
  }

  async run(_accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]> {
    for (const call of calls) {
      const extra = Object.keys((call.body ?? {}) as object).filter((k) => !WRITABLE.has(k));
      if (call.method !== "POST" || !/^\d+$/.test(call.path) || extra.length) {
        throw new ProviderError(PROVIDER, "bad_request", `refusing a call that is not an ad set targeting write${extra.length ? ` (carries ${extra.join(", ")})` : ""}`);
      }
    }
    const out: ChangeResult[] = [];
    for (const [n, call] of calls.entries()) {
      const what = `ad set ${call.path}${opts.dryRun ? " (validate_only)" : ""}`;
      const body = { ...(call.body as object), ...(opts.dryRun ? { execution_options: ["validate_only"] } : {}) };
      const r = await this.send("POST", call.path, what, { body });
      const requestId = r.traceId ?? undefined;
      if (r.status === 200 && r.body && !graphErrorOf(r.body)) {
        for (const id of call.change_ids) out.push({ change_id: id, ok: true, request_id: requestId });
        continue;
      }
      const e = graphErrorOf(r.body);
      const kind = kindOf(r.status, e);
      if (kind === "bad_request" || kind === "not_found") {
        // Meta refuses the ad set's whole write, so every change of the call fails; Meta's message names the interest
        // at fault when one is (looked up in the spec sent, for its name).
        const said = graphMessage(e, r.status);
        const culprit = this.namedInterest(call, said);
        const message = `${culprit ? `interest ${culprit} refused; ` : ""}ad set ${call.path} not written: ${said}`;
        for (const id of call.change_ids) {
          out.push({ change_id: id, ok: false, request_id: requestId, error: new ProviderError(PROVIDER, kind, message, { status: r.status, providerCode: providerCodeOf(e, r.status) }) });
        }
        continue;
      }
      const err = callError(r.status, r.body, r.headers, what, r.traceId);
      // Nothing written yet (or a dry run): the whole run can be tried again later. After a write went through, the
      // run reports what was applied and fails the rest with this error.
      if (opts.dryRun || !out.some((x) => x.ok)) throw err;
      for (const rest of calls.slice(n)) for (const id of rest.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: err });
      break;
    }
    return out;
  }

  /** The interest (id and name) of the spec sent that Meta's error message names, if any. */
  private namedInterest(call: ProviderCall, said: string): string | null {
    const spec = (call.body as { targeting?: { flexible_spec?: { interests?: { id: string; name?: string }[] }[] } }).targeting;
    for (const i of (spec?.flexible_spec ?? []).flatMap((g) => g?.interests ?? [])) {
      if (!/^\d+$/.test(String(i.id))) continue;
      if (new RegExp(`\\b${i.id}\\b`).test(said)) return `${i.id}${i.name ? ` (${i.name})` : ""}`;
    }
    return null;
  }
}
