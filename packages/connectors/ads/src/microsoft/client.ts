import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdAccount, AdsClient, AdsEntity, ChangeResult, EntityTargeting, ExecutorRequest, Page, ProviderCall, TargetingChange, TargetingField, TargetingItem } from "../kind.ts";
import { checkAdds, checkDeletes, type AddBody, type DeleteBody, type KeywordRow } from "./checks.ts";
import { callError, describe, faultOf, PROVIDER, type BatchError } from "./errors.ts";
import { hostOf } from "./hosts.ts";
import { env as ENV, manifest } from "./manifest.ts";

// The Microsoft Advertising Campaign Management REST client: Search campaigns of the account
// (`Campaigns/QueryByAccountId`), their ad groups (`AdGroups/QueryByCampaignId`), and keywords, which are not
// ad-group criterions in Microsoft's model: read with `Keywords/QueryByAdGroupId`, added with `POST Keywords`
// (AddKeywords, `KeywordIds` aligned to the input) and removed with `DELETE Keywords` (DeleteKeywords). Both writes
// succeed in part: `PartialErrors` name the failed items by `Index`, so results are per change. Neither API read
// pages, so the listing pages itself. No bid is ever sent: a new keyword bids what its ad group bids.
// The account id is `<customerId>:<accountId>`: every call needs both the CustomerId (the customer, or the manager
// acting for it) and the CustomerAccountId headers, and carrying both in the selection spares a Customer Management
// lookup (another host) per call. Longs are sent as JSON strings, as Microsoft's REST templates quote them: a number
// past 2^53 would lose digits in any JSON number parser on the way.

/** Keywords are added as phrase match: broad match would spend on loosely related searches. */
const MATCH_TYPE = "Phrase";
const DEFAULT_WAIT_SECONDS = 60;
const MAX_PAGE = 200;

interface Account { customerId: string; accountId: string }
type Cursor = { p: "c"; o: number } | { p: "g"; c: string; o: number };

const bad = (message: string) => new ProviderError(PROVIDER, "bad_request", message);
export function parseAccount(id: string): Account {
  const m = /^\s*(\d{1,18}):(\d{1,18})\s*$/.exec(id);
  if (!m) throw bad(`account ${JSON.stringify(id)}: Microsoft Advertising accounts are selected as "<customerId>:<accountId>" (both numeric ids, as the Microsoft Advertising UI's URL shows them: cid and aid)`);
  return { customerId: m[1], accountId: m[2] };
}
const MAX_LONG = 2n ** 63n - 1n;
/** A 64-bit id as its digits (what the body carries); anything else is refused before a call. */
const isLong = (v: unknown): v is string => typeof v === "string" && /^\d{1,19}$/.test(v) && BigInt(v) > 0n && BigInt(v) <= MAX_LONG;
/** A plan previewed before ids went out as strings carries safe-integer numbers: sent as their digits. */
const asLong = (v: unknown): unknown => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? String(v) : v);
const longOf = (id: string, what: string): string => {
  if (!isLong(id)) throw bad(`${what} id ${id}: a numeric id expected`);
  return id;
};
const cursorOf = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");
function parseCursor(s?: string): Cursor {
  if (!s) return { p: "c", o: 0 };
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as Record<string, unknown>;
    const o = Number(c.o);
    if (Number.isSafeInteger(o) && o >= 0) {
      if (c.p === "c") return { p: "c", o };
      if (c.p === "g" && typeof c.c === "string" && /^\d+$/.test(c.c)) return { p: "g", c: c.c, o };
    }
  } catch { /* fall through */ }
  throw bad("not a cursor of this listing (pass next_cursor back as given)");
}
/** A keyword as a targeting item; `resource` is its keyword id (what DeleteKeywords takes). */
const keywordItem = (text: string, matchType: string, keywordId?: string): TargetingItem =>
  ({ key: `${text.toLowerCase()}|${matchType}`, text, match_type: matchType, ...(keywordId ? { resource: keywordId } : {}) });
/** An executor plan's stand-in for the id a step's AddKeywords will return (substituted by the caller's runtime). */
const PLACEHOLDER = /^\{\{resource:[^{}]+\}\}$/;
const needKeywords = (field: TargetingField) => {
  if (field !== "keywords") throw bad(`Microsoft Advertising plans change keywords only, not ${field}`);
};
/** Numeric order of decimal ids (no BigInt: an odd id must not throw). */
const idCmp = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
const byId = (a: { Id?: unknown }, b: { Id?: unknown }) => idCmp(String(a.Id ?? ""), String(b.Id ?? ""));

interface Answer { status: number; body: any; trackingId: string | null }

export class MicrosoftAdsClient implements AdsClient {
  private readonly base: string;
  private readonly waitMs: number;
  private readonly version: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.version = pinnedVersion(manifest, ctx.env);
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/CampaignManagement/${this.version}/`;
    const wait = ctx.env?.[ENV.throttleWaitSeconds];
    const seconds = wait ? Number(wait) : DEFAULT_WAIT_SECONDS;
    if (!(seconds > 0 && seconds <= 3600)) throw new Error(`${ENV.throttleWaitSeconds} must be seconds between 0 and 3600, not ${JSON.stringify(wait)}`);
    this.waitMs = Math.round(seconds * 1000);
  }

  /** The headers of every call besides the credentials (what an executor's caller sends too). */
  private headersOf(a: Account): Record<string, string> {
    return { "content-type": "application/json", CustomerId: a.customerId, CustomerAccountId: a.accountId };
  }

  private async send(method: ProviderCall["method"], path: string, body: unknown, headers: Record<string, string>, what: string): Promise<Answer> {
    const developerToken = this.ctx.env?.[ENV.developerToken];
    if (!developerToken) throw bad(`${ENV.developerToken} is not set: every Microsoft Advertising call needs the developer token of the app's Microsoft Advertising account`);
    const r = await http.fetch(what, new URL(path, this.base), {
      env: this.ctx.env, method, json: body, headers: { ...headers, authorization: `Bearer ${this.ctx.accessToken}`, DeveloperToken: developerToken },
    });
    const parsed = r.text ? r.body : {};
    return { status: r.status, body: parsed, trackingId: faultOf(parsed)?.TrackingId ?? r.headers.get("trackingid") };
  }

  /** A read (Query* operations are POSTs); its answer, or the fault as a ProviderError. */
  private async query(a: Account, path: string, body: unknown, what: string): Promise<{ body: any; trackingId: string | null }> {
    const r = await this.send("POST", path, body, this.headersOf(a), what);
    if (r.status !== 200 || !r.body || faultOf(r.body)) throw callError(r.status, r.body, what, r.trackingId, this.waitMs);
    return r;
  }

  private async campaigns(a: Account): Promise<any[]> {
    // Keywords live in Search campaigns only (Audience and Performance Max campaigns have none).
    const r = await this.query(a, "Campaigns/QueryByAccountId", { AccountId: longOf(a.accountId, "account"), CampaignType: "Search" }, "Campaigns/QueryByAccountId");
    return [...(r.body.Campaigns ?? [])].sort(byId);
  }

  private async keywords(a: Account, adGroupId: string): Promise<{ rows: KeywordRow[]; trackingId: string | null }> {
    const r = await this.query(a, "Keywords/QueryByAdGroupId", { AdGroupId: longOf(adGroupId, "ad group") }, `keywords of ad group ${adGroupId}`);
    const rows = (r.body.Keywords ?? [])
      .filter((k: any) => k && k.Status !== "Deleted" && typeof k.Text === "string")
      .map((k: any): KeywordRow => ({ id: String(k.Id), text: k.Text, matchType: String(k.MatchType) }));
    return { rows, trackingId: r.trackingId };
  }

  async listAccounts(): Promise<AdAccount[]> {
    // Customer Management (its own host): the signed-in user (GetUser without an id), then the accounts they can
    // reach (SearchAccounts by UserId), each as `<customerId>:<accountId>`, the form a selection takes.
    const user = await this.customerCall("User/Query", { UserId: null }, "GetUser");
    const userId = user?.User?.Id;
    if (userId === undefined || userId === null) throw new ProviderError(PROVIDER, "unavailable", "GetUser: no User.Id in the answer");
    const out: AdAccount[] = [];
    for (let index = 0; ; index++) {
      const r = await this.customerCall("Accounts/Search", {
        Predicates: [{ Field: "UserId", Operator: "Equals", Value: String(userId) }], Ordering: null, PageInfo: { Index: index, Size: MAX_PAGE },
      }, "SearchAccounts");
      const page: any[] = Array.isArray(r?.Accounts) ? r.Accounts : [];
      for (const a of page) out.push({ id: `${a.ParentCustomerId}:${a.Id}`, name: a.Name ? String(a.Name) : null });
      if (page.length < MAX_PAGE) return out;
    }
  }

  private async customerCall(op: string, body: unknown, what: string): Promise<any> {
    const url = `${hostOf(this.ctx.baseUrl, this.ctx.env?.[ENV.customerUrl], "clientcenter")}/CustomerManagement/${this.version}/${op}`;
    const r = await this.send("POST", url, body, { "content-type": "application/json" }, what);
    if (r.status !== 200 || !r.body || faultOf(r.body)) throw callError(r.status, r.body, what, r.trackingId, this.waitMs);
    return r.body;
  }

  async listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>> {
    // Campaigns first, then ad groups (where keywords live), campaign by campaign; neither read pages, so the
    // cursor holds the position (a campaign id and an offset), robust to campaigns added between pages.
    const a = parseAccount(accountId);
    const c = parseCursor(opts.cursor);
    const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit) || 50));
    const campaigns = await this.campaigns(a);
    if (c.p === "c") {
      const data = campaigns.slice(c.o, c.o + limit).map((x): AdsEntity => ({ id: String(x.Id), name: String(x.Name ?? ""), level: "campaign", parent_id: null, status: String(x.Status ?? ""), targeting: [] }));
      const next: Cursor | null = c.o + limit < campaigns.length ? { p: "c", o: c.o + limit } : campaigns.length ? { p: "g", c: String(campaigns[0].Id), o: 0 } : null;
      return { data, next_cursor: next ? cursorOf(next) : null };
    }
    // The cursor's campaign, or the next one if it was removed meanwhile.
    let i = campaigns.findIndex((x) => idCmp(String(x.Id), c.c) >= 0);
    let offset = i >= 0 && String(campaigns[i].Id) === c.c ? c.o : 0;
    const data: AdsEntity[] = [];
    while (i >= 0 && i < campaigns.length && data.length < limit) {
      const id = String(campaigns[i].Id);
      const r = await this.query(a, "AdGroups/QueryByCampaignId", { CampaignId: longOf(id, "campaign") }, `ad groups of campaign ${id}`);
      const groups = [...(r.body.AdGroups ?? [])].sort(byId);
      const take = groups.slice(offset, offset + limit - data.length);
      data.push(...take.map((g): AdsEntity => ({ id: String(g.Id), name: String(g.Name ?? ""), level: "ad_group", parent_id: id, status: String(g.Status ?? ""), targeting: ["keywords"] })));
      if (offset + take.length < groups.length) return { data, next_cursor: cursorOf({ p: "g", c: id, o: offset + take.length }) };
      i++;
      offset = 0;
    }
    return { data, next_cursor: i >= 0 && i < campaigns.length ? cursorOf({ p: "g", c: String(campaigns[i].Id), o: 0 }) : null };
  }

  async readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]> {
    needKeywords(field);
    const a = parseAccount(accountId);
    const out: EntityTargeting[] = [];
    for (const id of entityIds) {
      const { rows } = await this.keywords(a, id);
      out.push({ entity_id: id, field, items: rows.map((k) => keywordItem(k.text, k.matchType, k.id)).sort((x, y) => x.key.localeCompare(y.key)) });
    }
    return out;
  }

  async resolveItems(_accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>> {
    needKeywords(field);
    // A keyword is the trend's own phrase: lower case, without characters search keywords do not use, at most
    // 10 words and 100 characters (checks.ts).
    return new Map(phrases.map((p) => {
      const text = p.toLowerCase().replace(/[^\p{L}\p{N}\s'.&+-]/gu, " ").replace(/\s+/g, " ").trim().split(" ").slice(0, 10).join(" ").slice(0, 100).trim();
      return [p, text ? [keywordItem(text, MATCH_TYPE)] : []];
    }));
  }

  calls(accountId: string, changes: TargetingChange[], _prior: EntityTargeting[]): ProviderCall[] {
    const a = parseAccount(accountId);
    const byGroup = new Map<string, TargetingChange[]>();
    for (const c of changes) {
      needKeywords(c.field);
      byGroup.set(c.entity_id, [...(byGroup.get(c.entity_id) ?? []), c]);
    }
    const out: ProviderCall[] = [];
    for (const [group, mine] of byGroup) {
      const AdGroupId = longOf(group, "ad group");
      const adds = mine.filter((c) => c.op === "add");
      const removes = mine.filter((c) => c.op === "remove");
      if (adds.length) out.push({
        method: "POST", path: "Keywords", headers: this.headersOf(a), change_ids: adds.map((c) => c.id),
        body: { AdGroupId, Keywords: adds.map((c) => ({ Text: c.item.text, MatchType: c.item.match_type ?? MATCH_TYPE })) } satisfies AddBody,
      });
      if (removes.length) out.push({
        method: "DELETE", path: "Keywords", headers: this.headersOf(a), change_ids: removes.map((c) => c.id),
        body: {
          AdGroupId, KeywordIds: removes.map((c) => {
            const id = c.item.resource;
            if (!id) throw bad(`removing "${c.item.text}" needs its keyword id as read`);
            return PLACEHOLDER.test(id) ? id : longOf(id, "keyword");
          }),
        } satisfies DeleteBody,
      });
    }
    return out;
  }

  /**
   * The call for an executor plan. Microsoft has no validate-only variant, so there is no dry-run request to hand out
   * (the same request would write): a dry run is this connector's own checks, made here.
   */
  executorRequest(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest {
    if (opts.dryRun) throw bad("Microsoft Advertising has no validate-only mode: a dry run is the connector's own checks, not a request a caller can make");
    return {
      method: call.method, url: new URL(call.path, this.base).toString(), headers: { ...(call.headers ?? {}) }, body: call.body,
      credentials: "Authorization: Bearer <access token>, DeveloperToken: <developer token>",
    };
  }

  async run(accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]> {
    const a = parseAccount(accountId);
    calls = calls.map((call) => {
      const b = (call.body ?? {}) as Record<string, unknown>;
      const body = { ...b, AdGroupId: asLong(b.AdGroupId), ...(Array.isArray(b.KeywordIds) ? { KeywordIds: b.KeywordIds.map(asLong) } : {}) };
      return { ...call, body };
    });
    for (const call of calls) guard(call, a);
    const out: ChangeResult[] = [];
    for (const [n, call] of calls.entries()) {
      const body = call.body as AddBody | DeleteBody;
      const adding = call.method === "POST";
      const what = `${adding ? "AddKeywords" : "DeleteKeywords"} for ad group ${body.AdGroupId}`;
      if (opts.dryRun) { out.push(...await this.check(a, call)); continue; }
      const r = await this.send(call.method, call.path, body, call.headers ?? this.headersOf(a), what);
      const requestId = r.trackingId ?? undefined;
      if (r.status === 200 && r.body && !faultOf(r.body)) {
        const partial = new Map<number, BatchError[]>();
        for (const e of (r.body.PartialErrors ?? []) as BatchError[]) if (typeof e?.Index === "number") partial.set(e.Index, [...(partial.get(e.Index) ?? []), e]);
        call.change_ids.forEach((id, i) => {
          const errs = partial.get(i);
          const made = adding ? r.body.KeywordIds?.[i] : undefined;
          if (errs || (adding && (made === null || made === undefined))) {
            const said = errs ? errs.map(describe).join("; ") : "not added (no keyword id returned)";
            out.push({ change_id: id, ok: false, request_id: requestId, error: new ProviderError(PROVIDER, "bad_request", `${what}: ${said}`, { status: 200, providerCode: errs?.[0] ? String(errs[0].ErrorCode ?? errs[0].Code) : "no_keyword_id" }) });
          } else out.push({ change_id: id, ok: true, request_id: requestId, ...(made !== undefined ? { resource: String(made) } : {}) });
        });
        continue;
      }
      const err = callError(r.status, r.body, what, r.trackingId, this.waitMs);
      const items = faultOf(r.body)?.BatchErrors ?? [];
      if (err.kind === "bad_request" || err.kind === "not_found") {
        // Refused as a whole (an ApiFaultDetail): nothing of this call was written. Its BatchErrors, if any, name
        // the items at fault; the others were refused with them.
        call.change_ids.forEach((id, i) => {
          const mine = items.filter((e) => e.Index === i);
          const message = mine.length ? `${what}: ${mine.map(describe).join("; ")}` : items.length ? `${what}: not written, another item of the request was refused` : err.message.replace(`${PROVIDER}: `, "");
          out.push({ change_id: id, ok: false, request_id: requestId, error: new ProviderError(PROVIDER, err.kind, message, err.detail) });
        });
        continue;
      }
      // Nothing written yet: the whole run can be tried again later (after the throttle's wait). After a write went
      // through, the run reports what was applied and fails the rest with this error.
      if (!out.some((x) => x.ok)) throw err;
      for (const rest of calls.slice(n)) for (const id of rest.change_ids) out.push({ change_id: id, ok: false, request_id: requestId, error: err });
      break;
    }
    return out;
  }

  /** The dry run of one call: our checks against the ad group's keywords as read now (nothing is written). */
  private async check(a: Account, call: ProviderCall): Promise<ChangeResult[]> {
    const body = call.body as AddBody | DeleteBody;
    let read: { rows: KeywordRow[]; trackingId: string | null };
    try {
      read = await this.keywords(a, String(body.AdGroupId));
    } catch (err) {
      if (!(err instanceof ProviderError) || (err.kind !== "not_found" && err.kind !== "bad_request")) throw err;
      return call.change_ids.map((id) => ({ change_id: id, ok: false, error: err }));
    }
    const verdicts = "Keywords" in body ? checkAdds(body, read.rows) : checkDeletes(body, read.rows);
    return call.change_ids.map((id, i) => {
      const why = verdicts[i];
      return why === null
        ? { change_id: id, ok: true, request_id: read.trackingId ?? undefined }
        : { change_id: id, ok: false, request_id: read.trackingId ?? undefined, error: new ProviderError(PROVIDER, "bad_request", `own check (Microsoft Advertising has no dry run): ${why}`, { providerCode: "connector_check" }) };
    });
  }
}

/** Refuses anything but a keyword add or delete of this account carrying only what the plan may change (no bids). */
function guard(call: ProviderCall, a: Account) {
  const b = (call.body ?? {}) as Record<string, unknown>;
  const keys = Object.keys(b).sort().join();
  const ok = call.path === "Keywords" && isLong(b.AdGroupId) && (
    (call.method === "POST" && keys === "AdGroupId,Keywords" && Array.isArray(b.Keywords) && b.Keywords.length === call.change_ids.length
      && (b.Keywords as object[]).every((k) => k && Object.keys(k).sort().join() === "MatchType,Text")) ||
    (call.method === "DELETE" && keys === "AdGroupId,KeywordIds" && Array.isArray(b.KeywordIds) && b.KeywordIds.length === call.change_ids.length
      && (b.KeywordIds as unknown[]).every(isLong)));
  const h = call.headers ?? {};
  if (!ok || (h.CustomerAccountId && h.CustomerAccountId !== a.accountId) || (h.CustomerId && h.CustomerId !== a.customerId)) {
    throw bad("refusing a call that is not a keyword add or delete of this account (only Text and MatchType may be sent; never a bid)");
  }
}
