import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdAccount, AdsClient, AdsEntity, ChangeResult, EntityTargeting, ExecutorRequest, Page, ProviderCall, TargetingChange, TargetingField, TargetingItem } from "../kind.ts";
import { criteriaProblems, FACETS, mergeInterests, planFacetOf, planUrns, type Criteria } from "./criteria.ts";
import { callError, errorOf, hintOf, kindOf, messageOf, PROVIDER, providerCodeOf } from "./errors.ts";
import { manifest } from "./manifest.ts";
import { restliQuery } from "./restli.ts";

// The LinkedIn Marketing API client under `<base>/rest/`, every call with the pinned
// `Linkedin-Version` and `X-Restli-Protocol-Version: 2.0.0` (structured query parameters are Rest.li 2.0 encoded,
// restli.ts). Entities: campaign groups, then campaigns (LinkedIn's "campaign" is the ad-set level, where targeting
// lives), paged with pageSize/pageToken: since version 202401 LinkedIn's search finders page with cursors, not the
// start/count older docs describe. A campaign's member interests and skills are the plan's `interests` (named
// through adTargetingEntities, found through its typeahead). A write is `POST .../adCampaigns/{id}` with
// `X-RestLi-Method: PARTIAL_UPDATE` and `{patch:{$set:{targetingCriteria}}}`, which replaces the whole criteria:
// one write per campaign carrying the criteria read at preview with only the plan's change merged (criteria.ts).
// There is no validate-only write: the dry run is our own checks (shape, the required location facet) plus
// `audienceCounts` of the criteria the write would set (LinkedIn answers 400 for facets or entities it refuses,
// and 0 for audiences under its 300-member minimum). There is no idempotency key; the apply worker reads before
// writing, and a PARTIAL_UPDATE sets a value, so repeating one cannot duplicate anything.

/** LinkedIn's page size ceiling (more is a 400). */
const MAX_PAGE = 1000;
/** LinkedIn will not run a campaign for fewer members; audienceCounts reports such totals as 0. */
const MIN_AUDIENCE = 300;
/** Typeahead matches a trend phrase resolves to when no entity has exactly its name. */
const MAX_MATCHES = 3;
/** URNs per adTargetingEntities name lookup (keeps the URL short). */
const URNS_PER_LOOKUP = 50;
/** Campaign and group statuses a plan may target (archived, canceled and removed ones cannot be edited). */
const EDITABLE = ["ACTIVE", "PAUSED", "DRAFT"];
const LOCALE = { language: "en", country: "US" };

const digits = (id: string, what: string) => {
  const d = id.replace(/^urn:li:(sponsoredAccount|sponsoredCampaign|sponsoredCampaignGroup):/, "");
  if (!/^\d+$/.test(d)) throw new ProviderError(PROVIDER, "bad_request", `${what} id ${id}: digits (or its urn:li: URN) expected`);
  return d;
};
type Level = "group" | "campaign";
/** Our cursor: the level being listed and LinkedIn's pageToken within it. */
const cursorOf = (c: { r: Level; t?: string }) => Buffer.from(JSON.stringify(c)).toString("base64url");
const parseCursor = (s?: string): { r: Level; t?: string } => {
  if (!s) return { r: "group" };
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as { r?: string; t?: unknown };
    if ((c.r === "group" || c.r === "campaign") && (c.t === undefined || (typeof c.t === "string" && c.t))) return { r: c.r, t: c.t as string | undefined };
  } catch { /* fall through */ }
  throw new ProviderError(PROVIDER, "bad_request", "not a cursor of this listing (pass next_cursor back as given)");
};
const needInterests = (field: TargetingField) => {
  if (field !== "interests") throw new ProviderError(PROVIDER, "bad_request", `LinkedIn Ads plans change interests (member interests and skills) only, not ${field}`);
};
const header = (h: Record<string, string> | undefined, name: string) => Object.entries(h ?? {}).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
const CALL_PATH = /^adAccounts\/(\d+)\/adCampaigns\/(\d+)$/;
/** The same result for every change a call carries (LinkedIn takes or refuses a campaign's write whole). */
const each = (call: ProviderCall, r: { ok: boolean; error?: ProviderError; request_id?: string | null; note?: string }): ChangeResult[] =>
  call.change_ids.map((change_id) => ({ change_id, ok: r.ok, ...(r.error ? { error: r.error } : {}), ...(r.request_id ? { request_id: r.request_id } : {}), ...(r.note ? { note: r.note } : {}) }));

interface Answer { status: number; body: any; requestId: string | null }
interface Entity { urn?: unknown; name?: unknown; facetUrn?: unknown }

export class LinkedInAdsClient implements AdsClient {
  private readonly base: string;
  private readonly version: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.version = pinnedVersion(manifest, ctx.env);
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/rest/`;
  }

  /** Headers of every call besides the token (what an executor's caller sends too). */
  private headers(): Record<string, string> {
    return { "Linkedin-Version": this.version, "X-Restli-Protocol-Version": "2.0.0" };
  }

  private async request(method: "GET" | "POST", path: string, what: string, opts: { query?: Record<string, unknown>; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
    const query = opts.query ? restliQuery(opts.query) : "";
    const r = await http.fetch(what, new URL(`${path}${query ? `?${query}` : ""}`, this.base), {
      env: this.ctx.env, method, json: opts.body, headers: { ...this.headers(), ...opts.headers, authorization: `Bearer ${this.ctx.accessToken}` },
    });
    return { status: r.status, body: r.text ? r.body : {}, requestId: r.headers.get("x-li-uuid") };
  }

  private async get(path: string, query: Record<string, unknown>, what: string): Promise<any> {
    const r = await this.request("GET", path, what, { query });
    if (r.status !== 200 || !r.body) throw callError(r.status, r.body, what, r.requestId);
    return r.body;
  }

  async listAccounts(): Promise<AdAccount[]> {
    // The accounts the member has a role on (LinkedIn's search answers only those), through its page tokens.
    const out: AdAccount[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.get("adAccounts", { q: "search", pageSize: MAX_PAGE, pageToken }, "adAccounts");
      for (const a of Array.isArray(page.elements) ? page.elements : []) out.push({ id: String(a.id), name: a.name ? String(a.name) : null });
      pageToken = typeof page.metadata?.nextPageToken === "string" && page.metadata.nextPageToken ? page.metadata.nextPageToken : undefined;
    } while (pageToken);
    return out;
  }

  async listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>> {
    // Campaign groups first, then campaigns (the level targeting lives on), each through LinkedIn's page tokens.
    const acc = digits(accountId, "ad account");
    const c = parseCursor(opts.cursor);
    const pageSize = Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit) || 25));
    const path = `adAccounts/${acc}/${c.r === "group" ? "adCampaignGroups" : "adCampaigns"}`;
    const page = await this.get(path, { q: "search", search: { status: { values: EDITABLE } }, pageSize, pageToken: c.t }, path);
    const rows: any[] = Array.isArray(page.elements) ? page.elements : [];
    const token = typeof page.metadata?.nextPageToken === "string" && page.metadata.nextPageToken ? page.metadata.nextPageToken : null;
    const data = rows.map((r): AdsEntity => c.r === "group"
      ? { id: String(r.id), name: String(r.name ?? ""), level: "campaign", parent_id: null, status: String(r.status ?? ""), targeting: [] }
      : {
        id: String(r.id), name: String(r.name ?? ""), level: "ad_set", status: String(r.status ?? ""), targeting: ["interests"],
        parent_id: typeof r.campaignGroup === "string" ? r.campaignGroup.split(":").pop() || null : null,
      });
    const next = token ? cursorOf({ r: c.r, t: token }) : c.r === "group" ? cursorOf({ r: "campaign" }) : null;
    return { data, next_cursor: next };
  }

  async readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]> {
    needInterests(field);
    const acc = digits(accountId, "ad account");
    const read: { id: string; spec: Criteria; urns: string[] }[] = [];
    for (const id of entityIds) {
      const campaign = await this.get(`adAccounts/${acc}/adCampaigns/${digits(id, "campaign")}`, {}, `campaign ${id}`);
      if (campaign.account !== undefined && campaign.account !== `urn:li:sponsoredAccount:${acc}`) throw new ProviderError(PROVIDER, "not_found", `campaign ${id} is not in ad account ${acc}`);
      const spec: Criteria = campaign.targetingCriteria && typeof campaign.targetingCriteria === "object" ? campaign.targetingCriteria : {};
      read.push({ id, spec, urns: planUrns(spec) });
    }
    const names = await this.names([...new Set(read.flatMap((r) => r.urns))]);
    return read.map((r) => ({ entity_id: r.id, field, items: r.urns.map((u) => ({ key: u, id: u, text: names.get(u) ?? u })), spec: r.spec }));
  }

  /** Names of targeting entities (criteria hold URNs only), through adTargetingEntities' urns finder. */
  private async names(urns: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < urns.length; i += URNS_PER_LOOKUP) {
      const r = await this.get("adTargetingEntities", { q: "urns", urns: urns.slice(i, i + URNS_PER_LOOKUP), locale: LOCALE }, "targeting entity names");
      for (const e of (Array.isArray(r.elements) ? r.elements : []) as Entity[]) if (typeof e.urn === "string" && typeof e.name === "string") out.set(e.urn, e.name);
    }
    return out;
  }

  async resolveItems(_accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>> {
    needInterests(field);
    const out = new Map<string, TargetingItem[]>();
    for (const p of phrases) {
      const q = p.replace(/\s+/g, " ").trim();
      if (!q) { out.set(p, []); continue; }
      const hits: TargetingItem[] = [];
      // Member interests first, then skills: an interest says what members follow, a skill what they do.
      for (const facet of [FACETS.interests, FACETS.skills]) {
        // queryVersion=QUERY_USES_URNS: the typeahead answers URNs (what criteria take) only when asked to.
        const r = await this.get("adTargetingEntities", { q: "typeahead", queryVersion: "QUERY_USES_URNS", facet, query: q, locale: LOCALE }, "targeting typeahead");
        for (const e of (Array.isArray(r.elements) ? r.elements : []) as Entity[]) {
          if (typeof e.urn === "string" && planFacetOf(e.urn) && !hits.some((h) => h.key === e.urn)) hits.push({ key: e.urn, id: e.urn, text: String(e.name ?? e.urn) });
        }
      }
      // An entity of exactly the trend's name is the match; otherwise LinkedIn's best few (in its order).
      const exact = hits.filter((h) => h.text.toLowerCase() === q.toLowerCase());
      out.set(p, exact.length ? exact.slice(0, 1) : hits.slice(0, MAX_MATCHES));
    }
    return out;
  }

  calls(accountId: string, changes: TargetingChange[], prior: EntityTargeting[]): ProviderCall[] {
    const acc = digits(accountId, "ad account");
    const byEntity = new Map<string, TargetingChange[]>();
    for (const c of changes) {
      needInterests(c.field);
      if (!planFacetOf(c.item.id ?? c.item.key)) throw new ProviderError(PROVIDER, "bad_request", `"${c.item.text}": a member interest or skill URN (urn:li:interest:<n>, urn:li:skill:<n>) expected`);
      byEntity.set(c.entity_id, [...(byEntity.get(c.entity_id) ?? []), c]);
    }
    return [...byEntity].map(([entityId, mine]) => {
      const before = prior.find((t) => t.entity_id === entityId && t.field === "interests");
      if (!before?.spec || typeof before.spec !== "object") {
        throw new ProviderError(PROVIDER, "bad_request", `campaign ${entityId}: its targetingCriteria as read at preview is needed (a write replaces the whole criteria)`);
      }
      return {
        method: "POST", path: `adAccounts/${acc}/adCampaigns/${digits(entityId, "campaign")}`,
        headers: { ...this.headers(), "X-RestLi-Method": "PARTIAL_UPDATE", "content-type": "application/json" },
        body: { patch: { $set: { targetingCriteria: mergeInterests(before.spec as Criteria, mine) } } }, change_ids: mine.map((c) => c.id),
      } satisfies ProviderCall;
    });
  }

  /**
   * The call for an executor plan, with the headers run() sends (the pinned version, Rest.li 2.0, PARTIAL_UPDATE).
   * LinkedIn has no validate-only write, so there is no dry-run request to hand out: the dry run is this connector's
   * checks and audienceCounts (the preview).
   */
  executorRequest(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest {
    if (opts.dryRun) throw new ProviderError(PROVIDER, "bad_request", "LinkedIn has no validate-only write: a dry run is the connector's own checks and audienceCounts, not a request a caller can make");
    return {
      method: call.method, url: new URL(call.path, this.base).toString(),
      headers: { ...this.headers(), "X-RestLi-Method": "PARTIAL_UPDATE", "content-type": "application/json" }, body: call.body,
      credentials: "Authorization: Bearer <access token>",
    };
  }

  async run(accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]> {
    const acc = digits(accountId, "ad account");
    const criteria = calls.map((call) => {
      const body = call.body as { patch?: { $set?: Record<string, unknown> } } | undefined;
      const set = body?.patch?.$set;
      const onlyCriteria = !!set && Object.keys(body!).join() === "patch" && Object.keys(body!.patch!).join() === "$set" && Object.keys(set).join() === "targetingCriteria";
      if (call.method !== "POST" || CALL_PATH.exec(call.path)?.[1] !== acc || header(call.headers, "X-RestLi-Method") !== "PARTIAL_UPDATE" || !onlyCriteria) {
        throw new ProviderError(PROVIDER, "bad_request", `refusing a call that is not a targetingCriteria PARTIAL_UPDATE of a campaign of ad account ${acc}`);
      }
      return set!.targetingCriteria as Criteria;
    });
    const out: ChangeResult[] = [];
    const fail = (call: ProviderCall, error: ProviderError, requestId?: string | null) => out.push(...each(call, { ok: false, error, request_id: requestId }));
    for (const [n, call] of calls.entries()) {
      const campaign = CALL_PATH.exec(call.path)![2];
      // Our own checks come first for writes too: a criteria without a location is never sent.
      const problems = criteriaProblems(criteria[n]);
      if (problems.length) {
        fail(call, new ProviderError(PROVIDER, "bad_request", `campaign ${campaign} not written (our check of LinkedIn's constraints): ${problems.join("; ")}`, { providerCode: "own_check" }));
        continue;
      }
      if (opts.dryRun) { out.push(...await this.sizeAudience(call, campaign, criteria[n])); continue; }
      const what = `campaign ${campaign}`;
      const r = await this.request("POST", call.path, what, { body: call.body, headers: { "X-RestLi-Method": "PARTIAL_UPDATE" } });
      const requestId = r.requestId ?? undefined;
      if (r.status >= 200 && r.status < 300) {
        out.push(...each(call, { ok: true, request_id: requestId }));
        continue;
      }
      const kind = kindOf(r.status, r.body);
      if (kind === "bad_request" || kind === "not_found") {
        // LinkedIn refuses the campaign's whole write, so every change of the call fails; the next campaign goes on.
        const e = errorOf(r.body);
        fail(call, new ProviderError(PROVIDER, kind, `campaign ${campaign} not written: ${messageOf(e, r.status)}${hintOf(r.status, r.body)}`, { status: r.status, providerCode: providerCodeOf(e, r.status) }), requestId);
        continue;
      }
      const err = callError(r.status, r.body, what, r.requestId);
      // Nothing written yet: the whole run can be tried again later. After a write went through, the run reports
      // what was applied and fails the rest with this error (retryable ones are retried by the apply worker).
      if (!out.some((x) => x.ok)) throw err;
      for (const rest of calls.slice(n)) fail(rest, err, requestId);
      break;
    }
    return out;
  }

  /**
   * The dry run's provider half: audienceCounts of the criteria the write would set. A 400 is LinkedIn refusing a
   * facet or entity in it; a total under the minimum (LinkedIn says 0) would leave a campaign that cannot run.
   */
  private async sizeAudience(call: ProviderCall, campaign: string, criteria: Criteria): Promise<ChangeResult[]> {
    const what = `audienceCounts for campaign ${campaign}`;
    const r = await this.request("GET", "audienceCounts", what, { query: { q: "targetingCriteriaV2", targetingCriteria: criteria } });
    if (r.status === 400) {
      const e = errorOf(r.body);
      const error = new ProviderError(PROVIDER, "bad_request", `campaign ${campaign}: LinkedIn refused the targeting: ${messageOf(e, r.status)}`, { status: 400, providerCode: providerCodeOf(e, 400) });
      return each(call, { ok: false, error, request_id: r.requestId });
    }
    if (r.status !== 200 || !r.body) throw callError(r.status, r.body, what, r.requestId);
    const total = Number(r.body.elements?.[0]?.total ?? 0);
    if (!(total >= MIN_AUDIENCE)) {
      const error = new ProviderError(PROVIDER, "bad_request", `campaign ${campaign}: the audience would be under LinkedIn's ${MIN_AUDIENCE}-member minimum`, { status: 200, providerCode: "audience_too_small" });
      return each(call, { ok: false, error, request_id: r.requestId });
    }
    return each(call, { ok: true, request_id: r.requestId, note: `audience after the change: about ${total.toLocaleString("en-US")} members` });
  }
}

