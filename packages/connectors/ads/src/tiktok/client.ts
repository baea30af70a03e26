import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdAccount, AdsClient, AdsEntity, ChangeResult, EntityTargeting, ExecutorRequest, Page, ProviderCall, TargetingChange, TargetingField, TargetingItem } from "../kind.ts";
import { callError, envelopeOf, kindOf, PROVIDER, providerCodeOf, succeeded, tiktokMessage } from "./errors.ts";
import { appEnv, manifest } from "./manifest.ts";
import { categoryItem, itemTypeOf, keywordItem, mergeInterests, specOf, writeConflicts, type InterestSpec, type InterestWrite } from "./targeting.ts";

// The TikTok API for Business client: campaigns and ad groups of an advertiser through
// /campaign/get/ and /adgroup/get/ (page + page_size, `page_info.total_page`), interest targeting read from each ad
// group, trend phrases resolved through TikTok's interest lookups (/tool/interest_keyword/recommend/, then the
// /tool/interest_category/ tree). A write is ONE `POST /adgroup/update/` per ad group carrying both interest lists
// read at preview with only the plan's changes merged in (targeting.ts); no budget, bid or other field is ever sent.
// TikTok has no validate-only flag, so the dry run is our own checks of each write against the ad group as it is now
// and TikTok's documented constraints (known, effective interest ids; no interest keywords next to purchase-intention
// keywords; list caps), reading only. The token goes in `Access-Token`.

/** /campaign/get/ and /adgroup/get/ take page_size 1-1000; filtering by ad group ids takes at most 100. */
const MAX_PAGE = 1000;
const MAX_IDS = 100;
/** /tool/interest_keyword/get/ looks up at most 50 ids per call. */
const MAX_KEYWORD_IDS = 50;
/** Interest keywords a trend phrase resolves to when TikTok has none of exactly that name. */
const MAX_MATCHES = 3;
const WRITE_PATH = "adgroup/update/";
/** The only fields a planned write may carry. */
const WRITABLE = new Set(["advertiser_id", "adgroup_id", "interest_category_ids", "interest_keyword_ids"]);
/**
 * Marks an ad group of a Smart+ campaign: TikTok automates its targeting and refuses targeting edits on
 * /adgroup/update/, so such an ad group is listed without editable targeting and the dry run refuses changes to it.
 */
const SMART_PLUS = "is_smart_performance_campaign";
const SPEC_FIELDS = ["adgroup_id", "campaign_id", "interest_category_ids", "interest_keyword_ids", "purchase_intention_keyword_ids", SMART_PLUS];

type Level = "campaign" | "ad_group";
const cursorOf = (c: { r: Level; p: number }) => Buffer.from(JSON.stringify(c)).toString("base64url");
const parseCursor = (s?: string): { r: Level; p: number } => {
  if (!s) return { r: "campaign", p: 1 };
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as { r?: string; p?: number };
    if ((c.r === "campaign" || c.r === "ad_group") && Number.isInteger(c.p) && c.p! >= 1) return { r: c.r, p: c.p! };
  } catch { /* fall through */ }
  throw new ProviderError(PROVIDER, "bad_request", "not a cursor of this listing (pass next_cursor back as given)");
};
const idOf = (id: string, what: string) => {
  if (!/^\d+$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `${what} id ${id}: digits expected`);
  return id;
};
const needInterests = (field: TargetingField) => {
  if (field !== "interests") throw new ProviderError(PROVIDER, "bad_request", `TikTok Ads plans change interests only, not ${field}`);
};
const chunks = <T>(xs: T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

interface Answer { status: number; body: any; requestId: string | null }
interface KeywordInfo { keyword_id: string; keyword: string; status?: string; keyword_status?: string }

export class TikTokAdsClient implements AdsClient {
  private readonly base: string;
  /** Interest categories (id -> name) of this client's advertiser, read once. */
  private categories: Map<string, string> | null = null;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    const version = pinnedVersion(manifest, ctx.env);
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/open_api/${version}/`;
  }

  private async send(method: "GET" | "POST", path: string, what: string, opts: { query?: Record<string, unknown>; body?: unknown } = {}): Promise<Answer> {
    const url = new URL(path, this.base);
    // GET parameters that are lists or objects go as JSON strings, as TikTok expects (e.g. filtering, fields).
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, typeof v === "string" ? v : JSON.stringify(v));
    const r = await http.fetch(what, url, { env: this.ctx.env, method, json: opts.body, headers: { "access-token": this.ctx.accessToken } });
    const rid = envelopeOf(r.body)?.request_id;
    return { status: r.status, body: r.body, requestId: typeof rid === "string" && rid ? rid : r.headers.get("x-tt-logid") };
  }

  /** A read's `data`; any failure (HTTP or `code != 0`) thrown as a ProviderError. */
  private async get(path: string, query: Record<string, unknown>, what: string): Promise<{ data: any; requestId: string | null }> {
    const r = await this.send("GET", path, what, { query });
    if (!succeeded(r.status, r.body)) throw callError(r.status, r.body, what, r.requestId);
    return { data: r.body.data ?? {}, requestId: r.requestId };
  }

  async listAccounts(): Promise<AdAccount[]> {
    // TikTok lists the advertisers a token reaches only to the app that holds it: the call names the app's id and secret.
    const appId = this.ctx.env?.[appEnv.clientId];
    const secret = this.ctx.env?.[appEnv.clientSecret];
    if (!appId || !secret) throw new ProviderError(PROVIDER, "bad_request", `listing advertisers needs ${appEnv.clientId} and ${appEnv.clientSecret}`);
    const { data } = await this.get("oauth2/advertiser/get/", { app_id: appId, secret }, "oauth2/advertiser/get");
    return (Array.isArray(data.list) ? data.list : []).map((a: any) => ({ id: String(a.advertiser_id), name: a.advertiser_name ? String(a.advertiser_name) : null }));
  }

  async listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>> {
    // Campaigns first, then ad groups (the level targeting lives on), each through TikTok's page numbers.
    const advertiser = idOf(accountId, "advertiser");
    const c = parseCursor(opts.cursor);
    const pageSize = Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit) || 50));
    const campaign = c.r === "campaign";
    const fields = campaign ? ["campaign_id", "campaign_name", "operation_status"] : ["adgroup_id", "adgroup_name", "campaign_id", "operation_status", SMART_PLUS];
    const { data } = await this.get(campaign ? "campaign/get/" : "adgroup/get/", { advertiser_id: advertiser, fields, page: String(c.p), page_size: String(pageSize) }, campaign ? "campaign/get" : "adgroup/get");
    const list: any[] = Array.isArray(data.list) ? data.list : [];
    const rows = list.map((r): AdsEntity => campaign
      ? { id: String(r.campaign_id), name: String(r.campaign_name ?? ""), level: "campaign", parent_id: null, status: String(r.operation_status ?? ""), targeting: [] }
      : { id: String(r.adgroup_id), name: String(r.adgroup_name ?? ""), level: "ad_group", parent_id: r.campaign_id ? String(r.campaign_id) : null, status: String(r.operation_status ?? ""), targeting: r[SMART_PLUS] === true ? [] : ["interests"] });
    const totalPages = Number(data.page_info?.total_page) || 0;
    const more = list.length > 0 && c.p < totalPages;
    const next = more ? cursorOf({ r: c.r, p: c.p + 1 }) : campaign ? cursorOf({ r: "ad_group", p: 1 }) : null;
    return { data: rows, next_cursor: next };
  }

  /** The interest lists of these ad groups as stored now (missing ones are absent: deleted or not this advertiser's). */
  private async specs(advertiser: string, adgroupIds: string[]): Promise<Map<string, { spec: InterestSpec; smartPlus: boolean; requestId: string | null }>> {
    const out = new Map<string, { spec: InterestSpec; smartPlus: boolean; requestId: string | null }>();
    for (const part of chunks(adgroupIds, MAX_IDS)) {
      const { data, requestId } = await this.get("adgroup/get/", {
        advertiser_id: advertiser, fields: SPEC_FIELDS, filtering: { adgroup_ids: part }, page: "1", page_size: String(MAX_IDS),
      }, "adgroup/get (targeting)");
      for (const r of Array.isArray(data.list) ? data.list : []) out.set(String(r.adgroup_id), { spec: specOf(r), smartPlus: r[SMART_PLUS] === true, requestId });
    }
    return out;
  }

  private async categoryNames(advertiser: string): Promise<Map<string, string>> {
    if (!this.categories) {
      const { data } = await this.get("tool/interest_category/", { advertiser_id: advertiser, version: "2", language: "en" }, "interest categories");
      const list: any[] = Array.isArray(data.interest_categories) ? data.interest_categories : [];
      this.categories = new Map(list.map((c) => [String(c.interest_category_id), String(c.interest_category_name ?? c.interest_category_id)]));
    }
    return this.categories;
  }

  private async keywordInfo(advertiser: string, ids: string[]): Promise<Map<string, KeywordInfo>> {
    const out = new Map<string, KeywordInfo>();
    for (const part of chunks([...new Set(ids)], MAX_KEYWORD_IDS)) {
      const { data } = await this.get("tool/interest_keyword/get/", { advertiser_id: advertiser, keyword_query: part.map((keyword_id) => ({ keyword_id })) }, "interest keywords");
      for (const k of Array.isArray(data.keywords) ? data.keywords : []) out.set(String(k.keyword_id), { ...k, keyword_id: String(k.keyword_id), keyword: String(k.keyword ?? k.keyword_id) });
    }
    return out;
  }

  async readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]> {
    needInterests(field);
    const advertiser = idOf(accountId, "advertiser");
    const ids = entityIds.map((id) => idOf(id, "ad group"));
    if (!ids.length) return [];
    const found = await this.specs(advertiser, ids);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw new ProviderError(PROVIDER, "not_found", `ad group ${missing.join(", ")} not found in advertiser ${advertiser} (deleted, or another advertiser's)`);
    const all = [...found.values()];
    const cats = all.some((x) => x.spec.interest_category_ids.length) ? await this.categoryNames(advertiser) : new Map<string, string>();
    const kws = await this.keywordInfo(advertiser, all.flatMap((x) => x.spec.interest_keyword_ids));
    return ids.map((id) => {
      const { spec } = found.get(id)!;
      const items = [
        ...spec.interest_category_ids.map((c) => categoryItem(c, cats.get(c))),
        ...spec.interest_keyword_ids.map((k) => keywordItem(k, kws.get(k)?.keyword)),
      ];
      return { entity_id: id, field, items, spec };
    });
  }

  async resolveItems(accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>> {
    needInterests(field);
    const advertiser = idOf(accountId, "advertiser");
    const out = new Map<string, TargetingItem[]>();
    for (const p of phrases) {
      const q = p.replace(/\s+/g, " ").trim();
      if (!q) { out.set(p, []); continue; }
      const { data } = await this.get("tool/interest_keyword/recommend/", { advertiser_id: advertiser, keyword: q, language: "en", limit: "20", audience_type: "GENERAL_INTEREST" }, "interest keyword search");
      // Only EFFECTIVE (and not OFFLINE) keywords can target an ad group, per TikTok's docs.
      const hits = (Array.isArray(data.recommended_keywords) ? data.recommended_keywords : [])
        .filter((k: KeywordInfo) => k.status === "EFFECTIVE" && k.keyword_status !== "OFFLINE")
        .map((k: KeywordInfo) => keywordItem(String(k.keyword_id), String(k.keyword)));
      const exact = hits.filter((h: TargetingItem) => norm(h.text) === norm(q));
      if (exact.length) { out.set(p, exact.slice(0, 1)); continue; }
      // No keyword of exactly the trend's name: a general interest category of that name, else TikTok's best few.
      const cat = [...(await this.categoryNames(advertiser))].find(([, name]) => norm(name) === norm(q));
      out.set(p, cat ? [categoryItem(cat[0], cat[1])] : hits.slice(0, MAX_MATCHES));
    }
    return out;
  }

  calls(accountId: string, changes: TargetingChange[], prior: EntityTargeting[]): ProviderCall[] {
    const advertiser = idOf(accountId, "advertiser");
    const byEntity = new Map<string, TargetingChange[]>();
    for (const c of changes) {
      needInterests(c.field);
      if (!itemTypeOf(c.item.key)) throw new ProviderError(PROVIDER, "bad_request", `"${c.item.text}" is not a TikTok interest category or interest keyword`);
      byEntity.set(c.entity_id, [...(byEntity.get(c.entity_id) ?? []), c]);
    }
    return [...byEntity].map(([entityId, mine]) => {
      const before = prior.find((t) => t.entity_id === entityId && t.field === "interests");
      if (!before?.spec || typeof before.spec !== "object") {
        throw new ProviderError(PROVIDER, "bad_request", `ad group ${entityId}: its interest lists as read at preview are needed (a write replaces each list it sends)`);
      }
      return {
        method: "POST", path: WRITE_PATH, headers: { "content-type": "application/json" },
        body: { advertiser_id: advertiser, adgroup_id: idOf(entityId, "ad group"), ...mergeInterests(specOf(before.spec as Record<string, unknown>), mine) },
        change_ids: mine.map((c) => c.id),
      } satisfies ProviderCall;
    });
  }

  executorRequest(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest {
    // TikTok has no validate-only variant of a write: an executor's caller cannot dry-run it at TikTok.
    if (opts.dryRun) throw new ProviderError(PROVIDER, "bad_request", "TikTok has no validate-only request: the dry run is the connector's own checks (the preview)");
    return { method: call.method, url: new URL(call.path, this.base).toString(), headers: { "content-type": "application/json" }, body: call.body, credentials: "Access-Token: <access token>" };
  }

  async run(accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]> {
    const advertiser = idOf(accountId, "advertiser");
    for (const call of calls) {
      const body = (call.body ?? {}) as Record<string, unknown>;
      const extra = Object.keys(body).filter((k) => !WRITABLE.has(k));
      if (call.method !== "POST" || call.path !== WRITE_PATH || extra.length || body.advertiser_id !== advertiser || !/^\d+$/.test(String(body.adgroup_id))) {
        throw new ProviderError(PROVIDER, "bad_request", `refusing a call that is not an interest targeting write to an ad group of advertiser ${advertiser}${extra.length ? ` (carries ${extra.join(", ")})` : ""}`);
      }
    }
    return opts.dryRun ? this.check(advertiser, calls) : this.write(calls);
  }

  /** The dry run: each write checked against the ad group as it is now and TikTok's constraints; nothing written. */
  private async check(advertiser: string, calls: ProviderCall[]): Promise<ChangeResult[]> {
    if (!calls.length) return [];
    const writes = calls.map((c) => c.body as InterestWrite & { adgroup_id: string });
    const now = await this.specs(advertiser, writes.map((w) => w.adgroup_id));
    const addedKeywords = writes.flatMap((w) => w.interest_keyword_ids.filter((k) => !now.get(w.adgroup_id)?.spec.interest_keyword_ids.includes(k)));
    const addedCategories = writes.flatMap((w) => w.interest_category_ids.filter((k) => !now.get(w.adgroup_id)?.spec.interest_category_ids.includes(k)));
    const kws = addedKeywords.length ? await this.keywordInfo(advertiser, addedKeywords) : new Map<string, KeywordInfo>();
    const cats = addedCategories.length ? await this.categoryNames(advertiser) : new Map<string, string>();
    const out: ChangeResult[] = [];
    calls.forEach((call, i) => {
      const w = writes[i];
      const current = now.get(w.adgroup_id);
      const fail = (kind: "bad_request" | "not_found", reasons: string[], code = "connector_check") => {
        for (const id of call.change_ids) {
          out.push({ change_id: id, ok: false, request_id: current?.requestId ?? undefined, error: new ProviderError(PROVIDER, kind, `ad group ${w.adgroup_id} would not be written: ${reasons.join("; ")}`, { providerCode: code }) });
        }
      };
      if (!current) return fail("not_found", ["it no longer exists in this advertiser"]);
      if (current.smartPlus) return fail("bad_request", ["it belongs to a Smart+ campaign, whose targeting TikTok automates: not editable through the API"], "not_editable");
      const reasons = writeConflicts(w, current.spec);
      for (const k of w.interest_keyword_ids.filter((x) => !current.spec.interest_keyword_ids.includes(x))) {
        const info = kws.get(k);
        if (!info) reasons.push(`interest keyword ${k} is unknown to TikTok`);
        else if (info.status !== "EFFECTIVE" || info.keyword_status === "OFFLINE") reasons.push(`interest keyword ${k} (${info.keyword}) is ${info.keyword_status === "OFFLINE" ? "offline" : "not effective"}: TikTok targets effective keywords only`);
      }
      for (const c of w.interest_category_ids.filter((x) => !current.spec.interest_category_ids.includes(x))) {
        if (!cats.has(c)) reasons.push(`interest category ${c} is not one of TikTok's interest categories`);
      }
      if (reasons.length) return fail("bad_request", reasons);
      for (const id of call.change_ids) out.push({ change_id: id, ok: true, request_id: current.requestId ?? undefined });
    });
    return out;
  }

  private async write(calls: ProviderCall[]): Promise<ChangeResult[]> {
    const out: ChangeResult[] = [];
    for (const [n, call] of calls.entries()) {
      const adgroup = String((call.body as { adgroup_id: string }).adgroup_id);
      const what = `adgroup/update ${adgroup}`;
      const r = await this.send("POST", call.path, what, { body: call.body });
      const requestId = r.requestId ?? undefined;
      if (succeeded(r.status, r.body)) {
        for (const id of call.change_ids) out.push({ change_id: id, ok: true, request_id: requestId });
        continue;
      }
      const kind = kindOf(r.status, r.body);
      if (kind === "bad_request" || kind === "not_found") {
        // TikTok refuses the ad group's whole write (code != 0, usually with HTTP 200): every change of the call fails.
        const message = `ad group ${adgroup} not written: ${providerCodeOf(r.status, r.body)} ${tiktokMessage(r.status, r.body)}`;
        for (const id of call.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: new ProviderError(PROVIDER, kind, message, { status: r.status, providerCode: providerCodeOf(r.status, r.body) }) });
        continue;
      }
      const err = callError(r.status, r.body, what, r.requestId);
      // Nothing written yet: the whole run can be tried again later. After a write went through, the run reports what
      // was applied and fails the rest with this (retryable) error.
      if (!out.some((x) => x.ok)) throw err;
      for (const rest of calls.slice(n)) for (const id of rest.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: err });
      break;
    }
    return out;
  }
}
