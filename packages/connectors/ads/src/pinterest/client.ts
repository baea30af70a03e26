import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdAccount, AdsClient, AdsEntity, ChangeResult, EntityTargeting, ExecutorRequest, Page, ProviderCall, TargetingChange, TargetingField, TargetingItem } from "../kind.ts";
import { checkCall, guardCall, MAX_KEYWORD } from "./checks.ts";
import { resultsOf } from "./results.ts";
import { callError, PROVIDER } from "./errors.ts";
import { manifest } from "./manifest.ts";
import { mergeInterests } from "./spec.ts";

// The Pinterest API v5 client (paths, parameters and bodies as in Pinterest's published description). Campaigns and ad groups of an ad account through `bookmark` pages. An ad group carries two kinds of
// targeting a plan may change:
// - interests: INTEREST ids in the ad group's targeting_spec, named through Pinterest's interest catalogue
//   (`GET /resources/targeting/INTEREST`). A PATCH replaces the whole targeting_spec, so each ad group's write carries
//   the spec read at preview with only the plan's interest changes merged in (spec.ts), and no other field (no budget,
//   bid or schedule) is ever sent. The batch endpoint (`PATCH /ad_accounts/{id}/ad_groups`, an array of ad groups)
//   gets one ad group per call: a call's result items are per ad group, and ProviderCall has no way to say which
//   change belongs to which item of a multi-group batch, so each change's result is exactly its ad group's item.
// - keywords: the ad group's own keywords (`/ad_accounts/{id}/keywords`, parent_id = the ad group), added with
//   `POST` (PHRASE match, per-keyword errors in the answer) and removed by archiving them (`PATCH`, archived: true).
// Pinterest has no dry run: `run({dryRun:true})` reads the ad groups and the interest catalogue and applies the
// documented constraints (checks.ts), then asks Pinterest to size the audience of each ad group's new targeting_spec
// (`POST .../ad_groups/audience_sizing`, a read: Pinterest validates the spec and estimates who it reaches); a spec
// Pinterest refuses to size, or sizes at nobody, is refused. Nothing is written. The token goes in the Authorization
// header only.

const MAX_PAGE = 250;
/** Keywords are added as phrase match: broad match would spend on loosely related searches. */
const MATCH_TYPE = "PHRASE";
/** Interests a trend phrase resolves to when no interest has exactly its name. */
const MAX_MATCHES = 3;
const ALL_STATUSES = ["ACTIVE", "PAUSED", "ARCHIVED", "DRAFT", "DELETED_DRAFT"];
const KEYWORDS_PER_CALL = 100;

type Level = "campaign" | "ad_group";
type Query = Record<string, string | string[]>;
const cursorOf = (c: { r: Level; b?: string }) => Buffer.from(JSON.stringify(c)).toString("base64url");
const parseCursor = (s?: string): { r: Level; b?: string } => {
  if (!s) return { r: "campaign" };
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as { r?: string; b?: unknown };
    if ((c.r === "campaign" || c.r === "ad_group") && (c.b === undefined || typeof c.b === "string")) return { r: c.r, b: c.b as string | undefined };
  } catch { /* fall through */ }
  throw new ProviderError(PROVIDER, "bad_request", "not a cursor of this listing (pass next_cursor back as given)");
};
const idOf = (id: string, what: string) => {
  if (!/^\d{1,18}$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `${what} id ${id}: digits expected`);
  return id;
};
const keywordItem = (value: string, matchType: string, id?: string): TargetingItem =>
  ({ key: `${value.toLowerCase()}|${matchType}`, text: value, match_type: matchType, ...(id ? { resource: id } : {}) });
const chunks = <T>(xs: T[], n: number) => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

interface Answer { status: number; body: any; headers: Headers; requestId: string | null }
interface AdGroup { id: string; status: string; campaign_id?: string; targeting_spec?: Record<string, unknown>; auto_targeting_enabled?: boolean | null; placement_group?: string }

export class PinterestAdsClient implements AdsClient {
  private readonly base: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.base = `${ctx.baseUrl.replace(/\/+$/, "").replace(/\/v5$/, "")}/${pinnedVersion(manifest, ctx.env)}/`;
  }

  private async request(method: ProviderCall["method"], path: string, what: string, opts: { query?: Query; body?: unknown } = {}): Promise<Answer> {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(opts.query ?? {})) for (const x of Array.isArray(v) ? v : [v]) url.searchParams.append(k, x);
    const r = await http.fetch(what, url, { env: this.ctx.env, method, json: opts.body, headers: { authorization: `Bearer ${this.ctx.accessToken}` } });
    return { status: r.status, body: r.text ? r.body : {}, headers: r.headers, requestId: r.headers.get("x-pinterest-rid") };
  }

  private async get(path: string, query: Query, what: string): Promise<any> {
    const r = await this.request("GET", path, what, { query });
    if (r.status !== 200 || r.body === null) throw callError(r.status, r.body, r.headers, what, r.requestId);
    return r.body;
  }

  /** Every item of a bookmark-paged listing. */
  private async all(path: string, query: Query, what: string): Promise<any[]> {
    const out: any[] = [];
    let bookmark: string | undefined;
    do {
      const page = await this.get(path, { ...query, page_size: String(MAX_PAGE), ...(bookmark ? { bookmark } : {}) }, what);
      out.push(...(Array.isArray(page.items) ? page.items : []));
      bookmark = page.bookmark || undefined;
    } while (bookmark);
    return out;
  }

  /** The account's ad groups of these ids, any status (the ones that do not exist or are elsewhere are absent). */
  private async adGroups(account: string, ids: string[]): Promise<Map<string, AdGroup>> {
    const out = new Map<string, AdGroup>();
    for (const part of chunks([...new Set(ids)], MAX_PAGE)) {
      const items = await this.all(`ad_accounts/${account}/ad_groups`, { ad_group_ids: part, entity_statuses: ALL_STATUSES }, "ad groups");
      for (const g of items) out.set(String(g.id), g);
    }
    return out;
  }

  /** Pinterest's interest catalogue, id -> name (`[{ "<id>": "<name>", ... }]`). */
  private async interests(account: string): Promise<Map<string, string>> {
    const body = await this.get("resources/targeting/INTEREST", { ad_account_id: account }, "interest targeting options");
    const out = new Map<string, string>();
    for (const o of Array.isArray(body) ? body : []) {
      if (o && typeof o.id === "string" && typeof o.name === "string") out.set(o.id, o.name);
      else for (const [id, name] of Object.entries(o ?? {})) if (typeof name === "string") out.set(id, name);
    }
    return out;
  }

  async listAccounts(): Promise<AdAccount[]> {
    return (await this.all("ad_accounts", {}, "ad accounts")).map((a) => ({ id: String(a.id), name: a.name ? String(a.name) : null }));
  }

  async listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>> {
    // Campaigns first, then ad groups (the level targeting lives on), each through Pinterest's own bookmarks.
    const account = idOf(accountId, "ad account");
    const c = parseCursor(opts.cursor);
    const page_size = String(Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit) || 25)));
    const what = c.r === "campaign" ? "campaigns" : "ad_groups";
    const page = await this.get(`ad_accounts/${account}/${what}`, { page_size, order: "ASCENDING", ...(c.b ? { bookmark: c.b } : {}) }, what.replace("_", " "));
    const data = (page.items ?? []).map((r: any): AdsEntity => c.r === "campaign"
      ? { id: String(r.id), name: String(r.name ?? ""), level: "campaign", parent_id: null, status: String(r.status ?? ""), targeting: [] }
      : { id: String(r.id), name: String(r.name ?? ""), level: "ad_group", parent_id: r.campaign_id ? String(r.campaign_id) : null, status: String(r.status ?? ""), targeting: ["interests", "keywords"] });
    const next = page.bookmark ? cursorOf({ r: c.r, b: page.bookmark }) : c.r === "campaign" ? cursorOf({ r: "ad_group" }) : null;
    return { data, next_cursor: next };
  }

  async readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]> {
    const account = idOf(accountId, "ad account");
    const ids = entityIds.map((id) => idOf(id, "ad group"));
    if (!ids.length) return [];
    const groups = await this.adGroups(account, ids);
    const missing = ids.filter((id) => !groups.has(id));
    if (missing.length) throw new ProviderError(PROVIDER, "not_found", `ad group ${missing.join(", ")} is not in ad account ${account}`);
    if (field === "interests") {
      const names = await this.interests(account);
      return ids.map((id) => {
        const spec = groups.get(id)!.targeting_spec ?? {};
        const items = (Array.isArray(spec.INTEREST) ? spec.INTEREST : []).map((x) => String(x)).map((i): TargetingItem => ({ key: i, id: i, text: names.get(i) ?? i }));
        return { entity_id: id, field, items, spec };
      });
    }
    const out: EntityTargeting[] = [];
    for (const id of ids) {
      const kws = await this.all(`ad_accounts/${account}/keywords`, { ad_group_id: id }, `keywords of ad group ${id}`);
      // Negative keywords exclude; they are not targeting a plan adds to.
      const items = kws.filter((k) => !k.archived && !String(k.match_type).endsWith("_NEGATIVE")).map((k) => keywordItem(String(k.value), String(k.match_type), String(k.id)));
      out.push({ entity_id: id, field, items: items.sort((a, b) => a.key.localeCompare(b.key)) });
    }
    return out;
  }

  async resolveItems(accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>> {
    if (field === "keywords") {
      // A keyword is the trend's own phrase: trimmed, lower case, at most 120 characters as Pinterest allows.
      return new Map(phrases.map((p) => {
        const text = p.toLowerCase().replace(/[^\p{L}\p{N}\s'&+-]/gu, " ").replace(/\s+/g, " ").trim().slice(0, MAX_KEYWORD).trim();
        return [p, text ? [keywordItem(text, MATCH_TYPE)] : []];
      }));
    }
    const out = new Map<string, TargetingItem[]>();
    if (!phrases.some((p) => p.trim())) return new Map(phrases.map((p) => [p, []]));
    const catalogue = [...(await this.interests(idOf(accountId, "ad account")))];
    const words = (s: string) => s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
    for (const p of phrases) {
      const q = words(p).join(" ");
      if (!q) { out.set(p, []); continue; }
      // An interest of exactly the trend's name is the match; otherwise interests whose name holds the trend's words
      // (or the trend holds the interest's), shortest names first: the closest few.
      const exact = catalogue.filter(([, name]) => words(name).join(" ") === q);
      const near = catalogue.filter(([, name]) => {
        const n = ` ${words(name).join(" ")} `;
        return n.trim() && (n.includes(` ${q} `) || ` ${q} `.includes(n));
      }).sort((a, b) => a[1].length - b[1].length);
      out.set(p, (exact.length ? exact.slice(0, 1) : near.slice(0, MAX_MATCHES)).map(([id, name]) => ({ key: id, id, text: name })));
    }
    return out;
  }

  calls(accountId: string, changes: TargetingChange[], prior: EntityTargeting[]): ProviderCall[] {
    const account = idOf(accountId, "ad account");
    const headers = { "content-type": "application/json" };
    const out: ProviderCall[] = [];
    const by = (field: TargetingField, op?: "add" | "remove") => {
      const m = new Map<string, TargetingChange[]>();
      for (const c of changes.filter((x) => x.field === field && (!op || x.op === op))) m.set(c.entity_id, [...(m.get(c.entity_id) ?? []), c]);
      return m;
    };
    for (const [entityId, mine] of by("interests")) {
      const before = prior.find((t) => t.entity_id === entityId && t.field === "interests");
      if (!before?.spec || typeof before.spec !== "object") {
        throw new ProviderError(PROVIDER, "bad_request", `ad group ${entityId}: its targeting_spec as read at preview is needed (a write replaces the whole spec)`);
      }
      out.push({
        method: "PATCH", path: `ad_accounts/${account}/ad_groups`, headers,
        body: [{ id: idOf(entityId, "ad group"), targeting_spec: mergeInterests(before.spec as Record<string, unknown>, mine) }], change_ids: mine.map((c) => c.id),
      });
    }
    for (const [entityId, mine] of by("keywords", "add")) {
      for (const part of chunks(mine, KEYWORDS_PER_CALL)) {
        out.push({
          method: "POST", path: `ad_accounts/${account}/keywords`, headers,
          body: { parent_id: idOf(entityId, "ad group"), keywords: part.map((c) => ({ value: c.item.text, match_type: c.item.match_type ?? MATCH_TYPE })) }, change_ids: part.map((c) => c.id),
        });
      }
    }
    const removes = changes.filter((c) => c.field === "keywords" && c.op === "remove");
    for (const part of chunks(removes, KEYWORDS_PER_CALL)) {
      const keywords = part.map((c) => {
        if (!c.item.resource) throw new ProviderError(PROVIDER, "bad_request", `removing keyword "${c.item.text}" needs its keyword id`);
        return { id: idOf(c.item.resource, "keyword"), archived: true };
      });
      out.push({ method: "PATCH", path: `ad_accounts/${account}/keywords`, headers, body: { keywords }, change_ids: part.map((c) => c.id) });
    }
    return out;
  }

  /**
   * The call for an executor plan. Pinterest has no dry run (audience sizing checks a spec, it does not validate the
   * write), so there is no dry-run request to hand out.
   */
  executorRequest(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest {
    if (opts.dryRun) throw new ProviderError(PROVIDER, "bad_request", "Pinterest has no dry run: a dry run is the connector's own checks and audience sizing, not a request a caller can make");
    return { method: call.method, url: new URL(call.path, this.base).toString(), headers: { "content-type": "application/json" }, body: call.body, credentials: "Authorization: Bearer <access token>" };
  }

  async run(accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]> {
    const account = idOf(accountId, "ad account");
    for (const call of calls) guardCall(account, call);
    if (opts.dryRun) return this.check(account, calls);
    const out: ChangeResult[] = [];
    for (const [n, call] of calls.entries()) {
      const what = `${call.method} ${call.path}`;
      const r = await this.request(call.method, call.path, what, { body: call.body });
      const requestId = r.requestId ?? undefined;
      if (r.status === 200 && r.body) {
        out.push(...resultsOf(call, r.body, r.status, requestId));
        continue;
      }
      const err = callError(r.status, r.body, r.headers, what, r.requestId);
      if (err.kind === "bad_request" || err.kind === "not_found") {
        // Pinterest refused the call as a whole (nothing of it written): its changes fail, the other calls go on.
        for (const id of call.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: err });
        continue;
      }
      // Nothing written yet: the whole run can be tried again later. After a write went through, the run reports what
      // was applied and fails the rest with this error.
      if (!out.some((x) => x.ok)) throw err;
      for (const rest of calls.slice(n)) for (const id of rest.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: err });
      break;
    }
    return out;
  }

  /** The own checks standing in for a dry run (checks.ts), then Pinterest's audience sizing: reads only. */
  private async check(account: string, calls: ProviderCall[]): Promise<ChangeResult[]> {
    if (!calls.length) return [];
    const groupIds = calls.flatMap((c) => (c.path.endsWith("/ad_groups") ? (c.body as { id: string }[]).map((i) => String(i.id)) : c.method === "POST" ? [String((c.body as { parent_id: string }).parent_id)] : []));
    const adGroups = groupIds.length ? await this.adGroups(account, groupIds.filter((id) => /^\d{1,18}$/.test(id))) : new Map<string, AdGroup>();
    const interests = calls.some((c) => c.path.endsWith("/ad_groups")) ? await this.interests(account) : new Map<string, string>();
    const out: ChangeResult[] = [];
    for (const call of calls) {
      const verdicts = checkCall(call, { adGroups, interests });
      const refused = (why: string, code: string, requestId?: string) =>
        ({ ok: false, request_id: requestId, error: new ProviderError(PROVIDER, "bad_request", `${code === "own_check" ? "own check (Pinterest has no dry run)" : "Pinterest's audience sizing"}: ${why}`, { providerCode: code }) });
      let sized: Omit<ChangeResult, "change_id"> | null = null;
      if (call.path.endsWith("/ad_groups") && [...verdicts.values()].every((v) => v === null)) sized = await this.sizeAudience(account, call, adGroups, refused);
      for (const [id, why] of verdicts) out.push({ change_id: id, ...(why ? refused(why, "own_check") : sized ?? { ok: true }) });
    }
    return out;
  }

  /** Pinterest's estimate of who an ad group's new targeting_spec reaches; a refusal when it refuses or finds nobody. */
  private async sizeAudience(account: string, call: ProviderCall, groups: Map<string, AdGroup>, refused: (why: string, code: string, rid?: string) => Omit<ChangeResult, "change_id">): Promise<Omit<ChangeResult, "change_id">> {
    const item = (call.body as { id: string; targeting_spec: Record<string, unknown> }[])[0];
    const g = groups.get(String(item.id));
    const what = `audience sizing of ad group ${item.id}`;
    const r = await this.request("POST", `ad_accounts/${account}/ad_groups/audience_sizing`, what, {
      body: { targeting_spec: item.targeting_spec, auto_targeting_enabled: g?.auto_targeting_enabled ?? false, ...(g?.placement_group ? { placement_group: g.placement_group } : {}) },
    });
    const rid = r.requestId ?? undefined;
    if (r.status === 200 && r.body) {
      const upper = Number(r.body.audience_size_upper_bound);
      return upper === 0 ? refused(`ad group ${item.id}'s targeting would reach no one (estimated audience 0)`, "audience_empty", rid) : { ok: true, request_id: rid };
    }
    const err = callError(r.status, r.body, r.headers, what, r.requestId);
    if (err.kind === "bad_request") return refused(`ad group ${item.id}'s targeting_spec was refused: ${err.message.replace(/^pinterest_ads: /, "")}`, err.detail.providerCode ?? "audience_sizing", rid);
    throw err;
  }
}
