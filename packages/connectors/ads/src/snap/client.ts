import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import { manifest } from "./manifest.ts";
import type { AdAccount, AdsClient, AdsEntity, ChangeResult, EntityTargeting, ExecutorRequest, Page, ProviderCall, TargetingChange, TargetingField, TargetingItem } from "../kind.ts";
import { callError, PROVIDER, reasonCode, type SnapEnvelope } from "./errors.ts";
import { includedInterests, lifestyleIds, mergeInterests, targetingProblems, type Squad } from "./targeting.ts";

// The Snap Marketing API client: campaigns and ad squads of an ad account through Snap's
// cursor pages, interest targeting read from each ad squad's `targeting.interests`, interests found in Snap's
// Lifestyle Category list (GET /v1/targeting/interests/scls; Snap has no search, so names are matched here). A
// write is `PATCH /v1/campaigns/{campaign_id}/adsquads` with `{adsquads:[{id, targeting}]}` (Snap's PATCH, May 2026):
// one per ad squad, carrying only the targeting as read with the plan's change merged in (targeting.ts). A PUT would
// have to send the whole ad squad back, read-only fields included, which Snap refuses, and would overwrite whatever
// else changed since the read. Snap has no dry run and no sandbox, so `run({dryRun:true})` sends nothing: it checks
// each call's targeting against Snap's documented constraints and the interest ids against the lookup. The token goes in the Authorization header only; Snap's `paging.next_link`
// is not followed (its cursor is read out and sent to our own base URL, so the token never leaves for another host).

/** Snap takes page sizes of 50 to 1000; reads of the whole account use the largest. */
const MIN_PAGE = 50;
const MAX_PAGE = 1000;
/** Interests a trend phrase resolves to when no Lifestyle Category has exactly its name. */
const MAX_MATCHES = 3;

type Level = "campaign" | "ad_squad";
/** Our cursor: the level, Snap's cursor, the offset within Snap's page (pages are >= 50) and Snap's page size. */
interface Cursor { r: Level; c?: string; o: number; l: number }
const cursorOf = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");
const parseCursor = (s: string | undefined, limit: number): Cursor => {
  if (!s) return { r: "campaign", o: 0, l: Math.max(MIN_PAGE, Math.min(MAX_PAGE, limit)) };
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as Partial<Cursor>;
    if ((c.r === "campaign" || c.r === "ad_squad") && (c.c === undefined || typeof c.c === "string") && Number.isInteger(c.o) && Number.isInteger(c.l)) return c as Cursor;
  } catch { /* fall through */ }
  throw new ProviderError(PROVIDER, "bad_request", "not a cursor of this listing (pass next_cursor back as given)");
};
const idOf = (id: string, what: string) => {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `${what} id ${JSON.stringify(id)}: a Snap id (letters, digits, dashes) expected`);
  return id;
};
const needInterests = (field: TargetingField) => {
  if (field !== "interests") throw new ProviderError(PROVIDER, "bad_request", `Snap Ads plans change interests only, not ${field}`);
};
const WRITE_PATH = /^campaigns\/([A-Za-z0-9-]{1,64})\/adsquads$/;
type Patch = { id: string; targeting: Record<string, unknown> };

/** A plan stored before writes became PATCHes carries a PUT of the whole ad squad: only its targeting is sent. */
function asPatch(call: ProviderCall): ProviderCall {
  const list = (call.body as { adsquads?: unknown } | null)?.adsquads;
  const whole = call.method === "PUT" && Array.isArray(list) && list.length === 1 ? (list[0] as Squad) : null;
  const cid = WRITE_PATH.exec(call.path)?.[1];
  if (!whole || !cid || whole.campaign_id !== cid || typeof whole.id !== "string") return call;
  return { ...call, method: "PATCH", body: { adsquads: [{ id: whole.id, targeting: whole.targeting ?? {} }] } };
}

interface Answer { status: number; body: (SnapEnvelope & Record<string, any>) | null }

export class SnapAdsClient implements AdsClient {
  private readonly base: string;
  /** Lifestyle Category id -> name, fetched once per client (the list changes rarely). */
  private catalogue: Promise<Map<string, string>> | null = null;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/${pinnedVersion(manifest, ctx.env)}/`;
  }

  private async request(method: "GET" | "PATCH", path: string, what: string, opts: { query?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const r = await http.fetch(what, url, { env: this.ctx.env, method, json: opts.body, headers: { authorization: `Bearer ${this.ctx.accessToken}` } });
    return { status: r.status, body: r.body && typeof r.body === "object" ? r.body : null };
  }

  private async get(path: string, query: Record<string, string>, what: string): Promise<Record<string, any>> {
    const r = await this.request("GET", path, what, { query });
    if (r.status !== 200 || !r.body || r.body.request_status !== "SUCCESS") throw callError(r.status, r.body, what);
    return r.body;
  }

  /** One page of a listing: the wrapped entities (`{sub_request_status, <one>}`) and Snap's next cursor. */
  private async page(path: string, key: string, one: string, cursor: string | undefined, limit: number, what: string) {
    const body = await this.get(path, { limit: String(limit), ...(cursor ? { cursor } : {}) }, what);
    const items = (Array.isArray(body[key]) ? body[key] : []).map((w: Record<string, any>) => w?.[one]).filter((x: unknown) => x && typeof x === "object");
    let next: string | undefined;
    const link = body.paging?.next_link;
    if (typeof link === "string" && link) {
      try { next = new URL(link).searchParams.get("cursor") ?? undefined; } catch { next = undefined; }
    }
    return { items: items as Record<string, any>[], next };
  }

  async listAccounts(): Promise<AdAccount[]> {
    // Ad accounts belong to organizations: the member's organizations, each with its ad accounts.
    const body = await this.get("me/organizations", { with_ad_accounts: "true" }, "me/organizations");
    return (Array.isArray(body.organizations) ? body.organizations : []).flatMap((w: Record<string, any>) =>
      (Array.isArray(w?.organization?.ad_accounts) ? w.organization.ad_accounts : []).map((a: any) => ({ id: String(a.id), name: a.name ? String(a.name) : null })));
  }

  async listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>> {
    // Campaigns first, then ad squads (the level targeting lives on). Snap's pages hold at least 50, so a smaller
    // page is cut out of Snap's and the cursor remembers where.
    const acct = idOf(accountId, "ad account");
    const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit) || 25));
    const c = parseCursor(opts.cursor, limit);
    const campaigns = c.r === "campaign";
    const page = await this.page(`adaccounts/${acct}/${campaigns ? "campaigns" : "adsquads"}`, campaigns ? "campaigns" : "adsquads", campaigns ? "campaign" : "adsquad", c.c, c.l, `ad account ${acct} ${campaigns ? "campaigns" : "ad squads"}`);
    const slice = page.items.slice(c.o, c.o + limit);
    const data = slice.map((r): AdsEntity => campaigns
      ? { id: String(r.id), name: String(r.name ?? ""), level: "campaign", parent_id: null, status: String(r.status ?? ""), targeting: [] }
      : { id: String(r.id), name: String(r.name ?? ""), level: "ad_set", parent_id: r.campaign_id ? String(r.campaign_id) : null, status: String(r.status ?? ""), targeting: ["interests"] });
    let next: Cursor | null;
    if (c.o + limit < page.items.length) next = { ...c, o: c.o + limit };
    else if (page.next) next = { r: c.r, c: page.next, o: 0, l: c.l };
    else next = campaigns ? { r: "ad_squad", o: 0, l: c.l } : null;
    return { data, next_cursor: next ? cursorOf(next) : null };
  }

  private lifestyleCategories(): Promise<Map<string, string>> {
    // Without country_code Snap lists the categories of every country; the ids are the same everywhere.
    this.catalogue ??= this.get("targeting/interests/scls", {}, "interest lookup").then((body) => {
      const m = new Map<string, string>();
      for (const d of Array.isArray(body.targeting_dimensions) ? body.targeting_dimensions : []) {
        const s = d?.scls;
        if (s?.id) m.set(String(s.id), String(s.name ?? s.id));
      }
      return m;
    }).catch((e) => { this.catalogue = null; throw e; });
    return this.catalogue;
  }

  async readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]> {
    needInterests(field);
    const acct = idOf(accountId, "ad account");
    const wanted = new Set(entityIds.map((id) => idOf(id, "ad squad")));
    const found = new Map<string, Squad>();
    if (!wanted.size) return [];
    // The account's ad squads, not one GET per ad squad: fewer calls under Snap's 10 requests/s per token, and only
    // an ad squad of this account is found.
    let cursor: string | undefined;
    do {
      const page = await this.page(`adaccounts/${acct}/adsquads`, "adsquads", "adsquad", cursor, MAX_PAGE, `ad account ${acct} ad squads`);
      for (const s of page.items) if (wanted.has(String(s.id))) found.set(String(s.id), s as Squad);
      cursor = found.size < wanted.size ? page.next : undefined;
    } while (cursor);
    const missing = [...wanted].filter((id) => !found.has(id));
    if (missing.length) throw new ProviderError(PROVIDER, "not_found", `ad squad ${missing.join(", ")} is not in ad account ${acct}`);
    const squads = entityIds.map((id) => found.get(id)!);
    const names = squads.some((s) => lifestyleIds(s).length) ? await this.lifestyleCategories() : new Map<string, string>();
    return squads.map((spec) => ({
      entity_id: spec.id, field,
      items: includedInterests(spec).map((id): TargetingItem => ({ key: id, id, text: names.get(id) ?? id })),
      spec,
    }));
  }

  async resolveItems(_accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>> {
    needInterests(field);
    const out = new Map<string, TargetingItem[]>();
    const wanted = phrases.map((p) => [p, p.replace(/\s+/g, " ").trim().toLowerCase()] as const);
    const all = wanted.some(([, q]) => q) ? [...(await this.lifestyleCategories())] : [];
    for (const [p, q] of wanted) {
      if (!q) { out.set(p, []); continue; }
      // A category of exactly the trend's name is the match; otherwise those whose name contains it (Snap's order).
      const exact = all.filter(([, name]) => name.toLowerCase() === q);
      const hits = exact.length ? exact.slice(0, 1) : all.filter(([, name]) => name.toLowerCase().includes(q)).slice(0, MAX_MATCHES);
      out.set(p, hits.map(([id, name]) => ({ key: id, id, text: name })));
    }
    return out;
  }

  calls(_accountId: string, changes: TargetingChange[], prior: EntityTargeting[]): ProviderCall[] {
    const bySquad = new Map<string, TargetingChange[]>();
    for (const c of changes) {
      needInterests(c.field);
      bySquad.set(c.entity_id, [...(bySquad.get(c.entity_id) ?? []), c]);
    }
    return [...bySquad].map(([squadId, mine]) => {
      const before = prior.find((t) => t.entity_id === squadId && t.field === "interests")?.spec as Squad | undefined;
      if (!before || typeof before !== "object" || before.id !== squadId || typeof before.campaign_id !== "string") {
        throw new ProviderError(PROVIDER, "bad_request", `ad squad ${squadId}: the ad squad as read is needed (its targeting is written back whole)`);
      }
      const patch: Patch = { id: squadId, targeting: mergeInterests(before, mine).targeting ?? {} };
      return {
        method: "PATCH", path: `campaigns/${idOf(before.campaign_id, "campaign")}/adsquads`, headers: { "content-type": "application/json" },
        body: { adsquads: [patch] }, change_ids: mine.map((c) => c.id),
      } satisfies ProviderCall;
    });
  }

  /** The call for an executor plan. Snap has no dry run: the same PATCH would write, so there is no dry-run request. */
  executorRequest(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest {
    if (opts.dryRun) throw new ProviderError(PROVIDER, "bad_request", "Snap has no dry run: a dry run is the connector's own checks, not a request a caller can make");
    return { method: call.method, url: new URL(call.path, this.base).toString(), headers: { "content-type": "application/json" }, body: call.body, credentials: "Authorization: Bearer <access token>" };
  }

  async run(_accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]> {
    calls = calls.map(asPatch);
    const squads = calls.map((call) => {
      const list = (call.body as { adsquads?: unknown } | null)?.adsquads;
      const squad = Array.isArray(list) && list.length === 1 ? (list[0] as Patch) : null;
      const ok = call.method === "PATCH" && WRITE_PATH.test(call.path) && squad && typeof squad.id === "string" && squad.targeting && typeof squad.targeting === "object"
        && Object.keys(squad).sort().join() === "id,targeting" && Object.keys(call.body as object).length === 1;
      if (!ok) throw new ProviderError(PROVIDER, "bad_request", "refusing a call that is not a PATCH of one ad squad's targeting to its campaign");
      return squad;
    });
    const out: ChangeResult[] = [];
    const refuse = (call: ProviderCall, message: string, code: string, requestId?: string) => {
      for (const id of call.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: new ProviderError(PROVIDER, "bad_request", message, { providerCode: code }) });
    };
    if (opts.dryRun) {
      // Nothing is sent: Snap would apply a PATCH. Our checks, then the interest ids against Snap's lookup.
      const known = squads.some((s) => lifestyleIds(s as Squad).length) ? await this.lifestyleCategories() : new Map<string, string>();
      calls.forEach((call, n) => {
        const problems = targetingProblems(squads[n].targeting);
        const gone = lifestyleIds(squads[n] as Squad).filter((id) => !known.has(id));
        if (gone.length) problems.push(`interest ${gone.join(", ")} is not in Snap's Lifestyle Categories any more`);
        if (problems.length) refuse(call, `ad squad ${squads[n].id} would be refused (checked by Trendgate, Snap has no dry run): ${problems.join("; ")}`, "own_check");
        else for (const id of call.change_ids) out.push({ change_id: id, ok: true });
      });
      return out;
    }
    for (const [n, call] of calls.entries()) {
      const squad = squads[n];
      const problems = targetingProblems(squad.targeting);
      if (problems.length) { refuse(call, `ad squad ${squad.id} not written (it breaks Snap's rules): ${problems.join("; ")}`, "own_check"); continue; }
      const what = `ad squad ${squad.id}`;
      const r = await this.request("PATCH", call.path, what, { body: call.body });
      const requestId = r.body?.request_id;
      const sub = Array.isArray(r.body?.adsquads) ? r.body!.adsquads[0] : undefined;
      if (r.status === 200 && sub?.sub_request_status === "SUCCESS") {
        for (const id of call.change_ids) out.push({ change_id: id, ok: true, request_id: requestId, resource: String(sub.adsquad?.id ?? squad.id) });
        continue;
      }
      if (sub && sub.sub_request_status !== "SUCCESS" && (r.status === 200 || r.status === 400)) {
        // Snap refused this ad squad (its validation): all the plan's changes to it fail, with Snap's reason.
        const reason = String(sub.sub_request_error_reason ?? r.body?.display_message ?? "refused");
        refuse(call, `${what} not written: ${reason.slice(0, 300)}`, reasonCode(reason) ?? r.body?.error_code ?? `http_${r.status}`, requestId);
        continue;
      }
      const err = callError(r.status, r.body, what);
      if (err.kind === "bad_request" || err.kind === "not_found") { refuse(call, err.message.replace(/^snap_ads: /, ""), err.detail.providerCode!, requestId); continue; }
      // Nothing written yet: the whole run can be tried again later. After a write went through, the run reports
      // what was applied and fails the rest with this (retryable) error.
      if (!out.some((x) => x.ok)) throw err;
      for (const rest of calls.slice(n)) for (const id of rest.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: err });
      break;
    }
    return out;
  }
}
