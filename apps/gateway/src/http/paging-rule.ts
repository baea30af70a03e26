import { isPageField } from "@trendgate/contracts";
import type { RouteDef } from "./route.ts";

/**
 * The paging rule, applied to every list route when it is mounted: a route answering a page (`next_cursor`) takes
 * its `limit` and `cursor` from the shared paging fields (pageQuery / pageLimit / pageCursor in the contracts), so
 * every list refuses the same bad values the same way. A list that does not is a programming error: mounting fails.
 */
export function assertPagingRule(route: RouteDef) {
  const answer = route.responses[200]?.schema as { shape?: Record<string, unknown> } | undefined;
  if (!answer?.shape || !("next_cursor" in answer.shape)) return;
  const query = (route.query as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};
  const missing = ["limit", "cursor"].filter((f) => !isPageField(query[f]));
  if (missing.length)
    throw new Error(`${route.operationId}: a list route takes ${missing.join(" and ")} from pageQuery (or pageLimit/pageCursor) of @trendgate/contracts`);
}
