// The connector's own checks, standing in for the dry run Microsoft Advertising does not have (no
// validate-only mode; its sandbox is a separate environment, not a preview of the production account). Each
// AddKeywords / DeleteKeywords item is checked against the documented constraints and the ad group's keywords as
// read now; one verdict per item, with the reason Microsoft would refuse it. What they cannot promise: editorial
// review (Microsoft may still disapprove a keyword after it is added) and limits Microsoft does not publish.

/** Keyword.Text: "can contain a maximum of 100 characters" (Campaign Management reference). */
export const MAX_TEXT = 100;
/** At most 10 words per keyword (Microsoft Advertising help's keyword guidelines; not in the API reference). */
export const MAX_WORDS = 10;
/** AddKeywords: "a maximum of 1,000 keywords ... per service request"; DeleteKeywords takes as many ids. */
export const MAX_PER_CALL = 1000;
/** Entity hierarchy limits: keywords per ad group. */
export const MAX_PER_AD_GROUP = 20_000;
export const MATCH_TYPES = ["Exact", "Phrase", "Broad"] as const;

export interface KeywordRow { id: string; text: string; matchType: string }
/** Ids are 64-bit longs, sent as JSON strings as Microsoft's REST templates quote them ("AdGroupId": "LongValueHere"). */
export interface AddBody { AdGroupId: string; Keywords: { Text: string; MatchType: string }[] }
export interface DeleteBody { AdGroupId: string; KeywordIds: string[] }

const norm = (t: string) => t.trim().replace(/\s+/g, " ").toLowerCase();
const keyOf = (text: string, matchType: string) => `${norm(text)}|${matchType}`;

/** One verdict per keyword added: null when it passes, else why Microsoft would refuse it. */
export function checkAdds(body: AddBody, current: KeywordRow[]): (string | null)[] {
  if (body.Keywords.length > MAX_PER_CALL) return body.Keywords.map(() => `AddKeywords takes at most ${MAX_PER_CALL} keywords per request`);
  const have = new Set(current.map((k) => keyOf(k.text, k.matchType)));
  const seen = new Set<string>();
  let room = MAX_PER_AD_GROUP - current.length;
  return body.Keywords.map((k) => {
    const text = typeof k.Text === "string" ? k.Text.trim() : "";
    if (!text) return "keyword text is empty";
    if (text.length > MAX_TEXT) return `keyword text is ${text.length} characters; at most ${MAX_TEXT}`;
    const words = text.split(/\s+/).length;
    if (words > MAX_WORDS) return `keyword has ${words} words; at most ${MAX_WORDS}`;
    if (!(MATCH_TYPES as readonly string[]).includes(k.MatchType)) return `match type ${JSON.stringify(k.MatchType)} is not one of ${MATCH_TYPES.join(", ")}`;
    const key = keyOf(text, k.MatchType);
    if (have.has(key)) return `"${text}" (${k.MatchType}) is already a keyword of ad group ${body.AdGroupId}`;
    if (seen.has(key)) return `"${text}" (${k.MatchType}) is in this request twice`;
    seen.add(key);
    if (room-- <= 0) return `ad group ${body.AdGroupId} would exceed ${MAX_PER_AD_GROUP} keywords`;
    return null;
  });
}

/** One verdict per keyword id deleted: it must be a keyword of the ad group now, and named once. */
export function checkDeletes(body: DeleteBody, current: KeywordRow[]): (string | null)[] {
  if (body.KeywordIds.length > MAX_PER_CALL) return body.KeywordIds.map(() => `DeleteKeywords takes at most ${MAX_PER_CALL} ids per request`);
  const have = new Set(current.map((k) => k.id));
  const seen = new Set<string>();
  return body.KeywordIds.map((raw) => {
    const id = String(raw);
    if (!have.has(id)) return `keyword ${id} is not a keyword of ad group ${body.AdGroupId} (any more)`;
    if (seen.has(id)) return `keyword ${id} is in this request twice`;
    seen.add(id);
    return null;
  });
}
