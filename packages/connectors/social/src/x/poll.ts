import type { PollOutcome, SocialConnectionState, SocialContext } from "../kind.ts";
import { quotaJson, spentUntil } from "../quota-json.ts";
import { ProviderError, type Observation, type QuotaState } from "../types.ts";
import { XClient } from "./client.ts";
import type { XOptions } from "./schemas.ts";

/** Per term: the newest post id seen. */
type XCursor = Record<string, { since_id?: string }>;

const newer = (a: string, b: string | undefined) => b === undefined || BigInt(a) > BigInt(b);

/** Recent search per term from the newest post seen (since_id), up to max_pages pages of page_size. */
export async function pollX(ctx: SocialContext, conn: SocialConnectionState): Promise<PollOutcome> {
  const x = new XClient(ctx);
  const options = conn.options as XOptions;
  const cursor: XCursor = { ...conn.cursor };
  const observations: Observation[] = [];
  let last: QuotaState | undefined;
  const out = (error?: ProviderError): PollOutcome => ({
    observations, cursor, error, quota: last ? { last: quotaJson(last) } : conn.quota, notBefore: last && spentUntil(last),
  });
  for (const term of conn.terms) {
    let res;
    try {
      res = await x.searchAll({ query: term, topic: term, sinceId: cursor[term]?.since_id, maxResults: options.page_size ?? 100, maxPages: options.max_pages ?? 3 }, conn.credentials.bearer_token);
    } catch (e) {
      if (e instanceof ProviderError) return out(e);
      throw e;
    }
    observations.push(...res.items);
    last = res.quota;
    // since_id moves only when every page was read; after an interruption the next poll reads them again (ignored as repeats).
    if (res.interrupted) return out(res.interrupted);
    let newest = cursor[term]?.since_id;
    for (const o of res.items) if (newer(o.externalId, newest)) newest = o.externalId;
    if (newest) cursor[term] = { since_id: newest };
  }
  return out();
}
