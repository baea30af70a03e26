import { ProviderError } from "@trendgate/connector-core";
import type { ProviderCall } from "../kind.ts";
import { PROVIDER } from "./errors.ts";

// The connector's own checks of planned calls, standing in for the dry run Pinterest does not have:
// each rule is one Pinterest documents in its API description (pinterest-v5.openapi.json), checked against
// what the dry run reads (the ad groups as they are now, Pinterest's interest catalogue), with nothing written. What
// these checks cannot see (an ad group in review, an interest Pinterest retires between preview and apply, Pinterest's
// own policy checks) can still be refused at apply, per ad group.
// guardCall, run before any call is sent (dry run or not), refuses anything that is not one of the three targeting
// writes the client builds (so no budget, bid or schedule field ever reaches Pinterest).

/** Ad groups one PATCH may carry (requestBody `minItems: 1, maxItems: 30`). */
export const MAX_AD_GROUPS = 30;
/** Keyword value length (KeywordsCommon.value: "120 chars max"). */
export const MAX_KEYWORD = 120;
/** Match types an ad group's positive keyword may have (MatchType without the _NEGATIVE ones). */
export const MATCH_TYPES = ["BROAD", "PHRASE", "EXACT"];
/** The only fields a planned ad-group write carries: never budget, bid or schedule. */
export const AD_GROUP_FIELDS = new Set(["id", "targeting_spec"]);

export interface CheckContext {
  /** The account's ad groups as read now (any status), by id. */
  adGroups: Map<string, { status: string }>;
  /** Pinterest's interest catalogue (id -> name). */
  interests: Map<string, string>;
}

const AGES = /^(1[89]|[2-5]\d|6[0-5])$/;

/** Why Pinterest would refuse this ad group's targeting_spec, or null. */
export function targetingProblem(ts: Record<string, any>, interests: Map<string, string>): string | null {
  if (!ts || typeof ts !== "object" || Array.isArray(ts)) return "targeting_spec must be an object";
  if (!(Array.isArray(ts.LOCATION) && ts.LOCATION.length) && !(Array.isArray(ts.GEO) && ts.GEO.length)) return "Pinterest requires at least one of LOCATION or GEO in targeting_spec";
  if ((ts.MINIMUM_AGE === undefined) !== (ts.MAXIMUM_AGE === undefined)) return "MINIMUM_AGE and MAXIMUM_AGE must be set together";
  if (ts.MINIMUM_AGE !== undefined && (!AGES.test(String(ts.MINIMUM_AGE)) || !/^(1[89]|[2-5]\d|6[0-5])\+?$/.test(String(ts.MAXIMUM_AGE)) || Number(ts.MINIMUM_AGE) > parseInt(String(ts.MAXIMUM_AGE), 10))) {
    return `ages ${ts.MINIMUM_AGE}-${ts.MAXIMUM_AGE} are not a range Pinterest takes (18 to 65, or 65+ as maximum)`;
  }
  if (Array.isArray(ts.AGE_BUCKET) && ts.AGE_BUCKET.length && ts.MINIMUM_AGE !== undefined) return "AGE_BUCKET cannot be combined with MINIMUM_AGE/MAXIMUM_AGE";
  const unknown = (Array.isArray(ts.INTEREST) ? ts.INTEREST : []).map(String).filter((id: string) => !interests.has(id));
  if (unknown.length) return `interest ${unknown.join(", ")} is not in Pinterest's interest catalogue (retired or never valid)`;
  return null;
}

/** One verdict per change id of the call: null when it passes, else the reason Pinterest would refuse it. */
export function checkCall(call: ProviderCall, ctx: CheckContext): Map<string, string | null> {
  const out = new Map<string, string | null>(call.change_ids.map((id) => [id, null]));
  const all = (why: string) => { for (const id of call.change_ids) out.set(id, why); return out; };
  const groupProblem = (id: string) => {
    const g = ctx.adGroups.get(id);
    if (!g) return `ad group ${id} is not in this ad account`;
    if (g.status === "ARCHIVED" || g.status === "DELETED_DRAFT") return `ad group ${id} is ${g.status.toLowerCase()}: Pinterest does not edit it`;
    return null;
  };
  if (call.method === "PATCH" && call.path.endsWith("/ad_groups")) {
    const items = call.body as Record<string, any>[];
    if (items.length < 1 || items.length > MAX_AD_GROUPS) return all(`a PATCH carries 1 to ${MAX_AD_GROUPS} ad groups, not ${items.length}`);
    // One ad group per call (client.ts): its changes share its verdict.
    for (const item of items) {
      const why = groupProblem(String(item.id)) ?? targetingProblem(item.targeting_spec, ctx.interests);
      if (why) return all(why);
    }
    return out;
  }
  if (call.method === "POST" && call.path.endsWith("/keywords")) {
    const body = call.body as { parent_id: string; keywords: { value: string; match_type: string }[] };
    const parent = groupProblem(body.parent_id);
    body.keywords.forEach((k, i) => {
      const id = call.change_ids[i];
      if (parent) out.set(id, parent);
      else if (!k.value.trim() || k.value.length > MAX_KEYWORD) out.set(id, `keyword "${k.value.slice(0, 40)}" must be 1 to ${MAX_KEYWORD} characters`);
      else if (!MATCH_TYPES.includes(k.match_type)) out.set(id, `match type ${k.match_type} is not one of ${MATCH_TYPES.join(", ")}`);
    });
    return out;
  }
  if (call.method === "PATCH" && call.path.endsWith("/keywords")) {
    (call.body as { keywords: { id: string }[] }).keywords.forEach((k, i) => { if (!/^\d+$/.test(k.id)) out.set(call.change_ids[i], `keyword id ${k.id}: digits expected`); });
    return out;
  }
  return all(`not a targeting write: ${call.method} ${call.path}`);
}

/** Refuses anything but the three targeting writes the client builds, for this ad account (run checks every call). */
export function guardCall(account: string, call: ProviderCall): void {
  const refuse = (why: string) => { throw new ProviderError(PROVIDER, "bad_request", `refusing a call that is not a targeting write (${why})`); };
  const b = call.body as any;
  if (call.path === `ad_accounts/${account}/ad_groups` && call.method === "PATCH") {
    if (!Array.isArray(b) || b.length !== 1) refuse("one ad group per PATCH");
    const extra = Object.keys(b[0] ?? {}).filter((k) => !AD_GROUP_FIELDS.has(k));
    if (extra.length || !b[0]?.targeting_spec) refuse(`carries ${extra.join(", ") || "no targeting_spec"}`);
    if (call.change_ids.length < 1) refuse("no changes");
  } else if (call.path === `ad_accounts/${account}/keywords` && call.method === "POST") {
    if (!b || Object.keys(b).some((k) => k !== "parent_id" && k !== "keywords") || !Array.isArray(b.keywords) || b.keywords.length !== call.change_ids.length) refuse("keyword create");
    if (b.keywords.some((k: object) => Object.keys(k).some((x) => x !== "value" && x !== "match_type"))) refuse("keyword fields other than value and match_type");
  } else if (call.path === `ad_accounts/${account}/keywords` && call.method === "PATCH") {
    if (!b || Object.keys(b).some((k) => k !== "keywords") || !Array.isArray(b.keywords) || b.keywords.length !== call.change_ids.length) refuse("keyword archive");
    if (b.keywords.some((k: any) => k.archived !== true || Object.keys(k).some((x) => x !== "id" && x !== "archived"))) refuse("keyword updates other than archiving");
  } else refuse(`${call.method} ${call.path}`);
}
