import { ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdAccount, AdsClient, AdsEntity, ChangeResult, EntityTargeting, ExecutorRequest, Page, ProviderCall, TargetingChange, TargetingField, TargetingItem } from "../kind.ts";
import { callError, codeOf, failuresOf, operationIndexOf, PROVIDER } from "./errors.ts";
import { digits, googleApi } from "./api.ts";

// The Google Ads REST client: GAQL reads through googleAds:search (pageToken paging) and keyword
// targeting as ad-group criteria, one `adGroupCriteria:mutate` per plan carrying one operation per change:
// `create` adds a keyword, `remove` takes the criterion's resource name. Writes use partialFailure (valid
// operations apply, each failure names its operation, so a run records per change); the dry run is the same call
// with validateOnly (nothing applied, every invalid operation named). Every mutated item counts against the daily
// operations quota, so reads are few and batched.

/** Keywords are added as phrase match: broad match would spend on loosely related searches. */
const MATCH_TYPE = "PHRASE";

const cursorOf = (c: { r: "campaign" | "ad_group"; t?: string }) => Buffer.from(JSON.stringify(c)).toString("base64url");
const parseCursor = (s?: string): { r: "campaign" | "ad_group"; t?: string } => {
  if (!s) return { r: "campaign" };
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as { r?: string; t?: string };
    if (c.r === "campaign" || c.r === "ad_group") return { r: c.r, t: c.t };
  } catch { /* fall through */ }
  throw new ProviderError(PROVIDER, "bad_request", "not a cursor of this listing (pass next_cursor back as given)");
};
const keywordItem = (text: string, matchType = MATCH_TYPE, resource?: string): TargetingItem =>
  ({ key: `${text.toLowerCase()}|${matchType}`, text, match_type: matchType, ...(resource ? { resource } : {}) });

type Row = Record<string, any>;

/**
 * Listings keep what a plan can act on: Google keeps REMOVED campaigns and ad groups (and their keywords) visible, and
 * plans add search keywords, which only Search campaigns serve (Performance Max, Display, Video... are left out).
 */
const LIVE_SEARCH_CAMPAIGN = "campaign.status != 'REMOVED' AND campaign.advertising_channel_type = 'SEARCH'";

/** Account names read per list (one search each), and how many of those reads run at once. */
const NAMED_ACCOUNTS_MAX = 50;
const NAME_READS_AT_ONCE = 4;

export class GoogleAdsClient implements AdsClient {
  private readonly base: string;
  private readonly loginCustomerId?: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    ({ base: this.base, loginCustomerId: this.loginCustomerId } = googleApi(ctx));
  }

  /** Headers of every call besides the token (what an executor's caller sends too). */
  private headers(): Record<string, string> {
    return { "content-type": "application/json", ...(this.loginCustomerId ? { "login-customer-id": this.loginCustomerId } : {}) };
  }

  private async post(path: string, body: unknown, what: string): Promise<{ status: number; body: any; requestId: string | null }> {
    const r = await http.fetch(what, new URL(path, this.base), { env: this.ctx.env, method: "POST", json: body, headers: { ...this.headers(), authorization: `Bearer ${this.ctx.accessToken}` } });
    return { status: r.status, body: r.text ? r.body : {}, requestId: r.headers.get("request-id") };
  }

  private async search(customerId: string, query: string, pageToken?: string): Promise<{ results: Row[]; nextPageToken?: string }> {
    const r = await this.post(`customers/${digits(customerId)}/googleAds:search`, { query, ...(pageToken ? { pageToken } : {}) }, "googleAds:search");
    if (r.status !== 200 || !r.body) throw callError(r.status, r.body, "googleAds:search", r.requestId);
    return { results: r.body.results ?? [], nextPageToken: r.body.nextPageToken || undefined };
  }

  async listAccounts(): Promise<AdAccount[]> {
    // The list holds resource names only (`./`: a bare "customers:…" would parse as a URL scheme).
    const what = "customers:listAccessibleCustomers";
    const r = await http.fetch(what, new URL(`./${what}`, this.base), { env: this.ctx.env, method: "GET", headers: { ...this.headers(), authorization: `Bearer ${this.ctx.accessToken}` } });
    const body = r.text ? r.body : {};
    if (r.status !== 200) throw callError(r.status, body, what, r.headers.get("request-id"));
    const ids = ((body?.resourceNames ?? []) as string[]).map((n) => String(n).split("/").pop()!);
    // A name costs one search per customer: the first NAMED_ACCOUNTS_MAX, a few at a time. A customer that cannot be
    // read (disabled, or reachable only through another login-customer-id) keeps a null name instead of failing the list.
    const names: (string | null)[] = [];
    for (let i = 0; i < Math.min(ids.length, NAMED_ACCOUNTS_MAX); i += NAME_READS_AT_ONCE) {
      names.push(...(await Promise.all(ids.slice(i, Math.min(i + NAME_READS_AT_ONCE, NAMED_ACCOUNTS_MAX)).map((id) => this.customerName(id)))));
    }
    return ids.map((id, i) => ({ id, name: names[i] ?? null }));
  }

  private async customerName(customerId: string): Promise<string | null> {
    try {
      const page = await this.search(customerId, "SELECT customer.id, customer.descriptive_name FROM customer");
      return page.results[0]?.customer?.descriptiveName || null;
    } catch {
      return null;
    }
  }

  async listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>> {
    // Campaigns first, then ad groups (the level keywords live on), each through Google's own pages.
    const c = parseCursor(opts.cursor);
    if (c.r === "campaign") {
      const page = await this.search(accountId, `SELECT campaign.id, campaign.name, campaign.status, campaign.advertising_channel_type FROM campaign WHERE ${LIVE_SEARCH_CAMPAIGN}`, c.t);
      const data = page.results.map((r): AdsEntity => ({ id: String(r.campaign.id), name: r.campaign.name, level: "campaign", parent_id: null, status: r.campaign.status, targeting: [] }));
      return { data, next_cursor: cursorOf(page.nextPageToken ? { r: "campaign", t: page.nextPageToken } : { r: "ad_group" }) };
    }
    const page = await this.search(accountId, `SELECT ad_group.id, ad_group.name, ad_group.status, ad_group.campaign FROM ad_group WHERE ad_group.status != 'REMOVED' AND ${LIVE_SEARCH_CAMPAIGN}`, c.t);
    const data = page.results.map((r): AdsEntity => ({
      id: String(r.adGroup.id), name: r.adGroup.name, level: "ad_group", parent_id: String(r.adGroup.campaign ?? "").split("/").pop() || null, status: r.adGroup.status, targeting: ["keywords"],
    }));
    return { data, next_cursor: page.nextPageToken ? cursorOf({ r: "ad_group", t: page.nextPageToken }) : null };
  }

  async readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]> {
    if (field !== "keywords") throw new ProviderError(PROVIDER, "bad_request", `Google Ads plans change keywords only, not ${field}`);
    const ids = entityIds.map((id) => { if (!/^\d+$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `ad group id ${id}: digits expected`); return id; });
    const byGroup = new Map<string, TargetingItem[]>(ids.map((id) => [id, []]));
    if (!ids.length) return [];
    const query = "SELECT ad_group_criterion.resource_name, ad_group_criterion.criterion_id, ad_group_criterion.keyword.text, ad_group_criterion.keyword.match_type, " +
      `ad_group_criterion.status, ad_group_criterion.negative, ad_group.id FROM ad_group_criterion WHERE ad_group_criterion.type = 'KEYWORD' AND ad_group.id IN (${ids.join(",")})`;
    let token: string | undefined;
    do {
      const page = await this.search(accountId, query, token);
      for (const r of page.results) {
        const crit = r.adGroupCriterion ?? {};
        if (crit.negative || crit.status === "REMOVED" || !crit.keyword) continue; // negatives are not targeting we add to
        byGroup.get(String(r.adGroup?.id))?.push(keywordItem(crit.keyword.text, crit.keyword.matchType, crit.resourceName));
      }
      token = page.nextPageToken;
    } while (token);
    return ids.map((id) => ({ entity_id: id, field, items: byGroup.get(id)!.sort((a, b) => a.key.localeCompare(b.key)) }));
  }

  async resolveItems(_accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>> {
    if (field !== "keywords") throw new ProviderError(PROVIDER, "bad_request", `Google Ads plans change keywords only, not ${field}`);
    // A keyword is the trend's own phrase: trimmed, lower case, at most 10 words and 80 characters as Google allows.
    return new Map(phrases.map((p) => {
      const text = p.toLowerCase().replace(/[^\p{L}\p{N}\s'.&+-]/gu, " ").replace(/\s+/g, " ").trim().split(" ").slice(0, 10).join(" ").slice(0, 80).trim();
      return [p, text ? [keywordItem(text)] : []];
    }));
  }

  calls(accountId: string, changes: TargetingChange[], _prior: EntityTargeting[]): ProviderCall[] {
    if (!changes.length) return [];
    const cid = digits(accountId);
    const operations = changes.map((c) => {
      if (c.op === "add") return { create: { adGroup: `customers/${cid}/adGroups/${c.entity_id}`, status: "ENABLED", keyword: { text: c.item.text, matchType: c.item.match_type ?? MATCH_TYPE } } };
      if (!c.item.resource) throw new ProviderError(PROVIDER, "bad_request", `removing "${c.item.text}" needs its criterion's resource name`);
      return { remove: c.item.resource };
    });
    return [{ method: "POST", path: `customers/${cid}/adGroupCriteria:mutate`, headers: this.headers(), body: { operations, partialFailure: true }, change_ids: changes.map((c) => c.id) }];
  }

  executorRequest(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest {
    return { method: call.method, url: new URL(call.path, this.base).toString(), headers: this.headers(), body: { ...(call.body as object), validateOnly: opts.dryRun }, credentials: "Authorization: Bearer <access token>" };
  }

  async run(_accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]> {
    const out: ChangeResult[] = [];
    for (const call of calls) {
      const body = { ...(call.body as object), validateOnly: opts.dryRun };
      const what = `adGroupCriteria:mutate${opts.dryRun ? " (validateOnly)" : ""}`;
      const r = await this.post(call.path, body, what);
      const perOp = new Map<number, string>();
      const failures = r.status === 200 ? failuresOf(r.body?.partialFailureError) : r.status === 400 ? failuresOf(r.body) : [];
      for (const e of failures) {
        const i = operationIndexOf(e);
        if (i !== null) perOp.set(i, [perOp.get(i), `${codeOf(e)}: ${e.message ?? ""}`.trim()].filter(Boolean).join("; "));
      }
      if (r.status !== 200 && !(r.status === 400 && perOp.size)) throw callError(r.status, r.body, what, r.requestId);
      call.change_ids.forEach((id, i) => {
        const err = perOp.get(i);
        if (err) out.push({ change_id: id, ok: false, error: new ProviderError(PROVIDER, "bad_request", err, { status: r.status, providerCode: err.split(":")[0] }), request_id: r.requestId ?? undefined });
        // A refused validateOnly request names every invalid operation: the others passed. A refused write applied
        // nothing (only a request-level refusal gets here: writes use partialFailure).
        else if (r.status !== 200 && !opts.dryRun) out.push({ change_id: id, ok: false, error: new ProviderError(PROVIDER, "unavailable", "not applied: another operation of its request was refused", { status: r.status, providerCode: "request_refused" }), request_id: r.requestId ?? undefined });
        else if (r.status !== 200) out.push({ change_id: id, ok: true, request_id: r.requestId ?? undefined });
        else out.push({ change_id: id, ok: true, request_id: r.requestId ?? undefined, resource: r.body?.results?.[i]?.resourceName || undefined });
      });
    }
    return out;
  }
}
