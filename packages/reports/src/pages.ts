import type { ReportOutputRow } from "@trendgate/contracts";
import { ProviderError } from "@trendgate/connector-core";
import { outputRow } from "./normalise.ts";
import { readable, type ReportSource } from "./sources.ts";

// The report's rows, provider after provider, as the providers page them; pulled by the consumer (a page is fetched
// when the previous one was taken), so memory holds a page whatever the report's size. A provider that fails is
// marked failed (its rows so far stay in) and the next one is read: one provider's outage is not a failed report.

export async function* reportRows(sources: ReportSource[], signal?: AbortSignal): AsyncGenerator<ReportOutputRow[]> {
  for (const s of sources.filter(readable)) {
    if (signal?.aborted) return;
    const o = s.outcome;
    try {
      const acct = await s.client.account(s.accountId);
      o.currency = acct.currency;
      o.time_zone = acct.time_zone;
      const src = { provider: s.provider, account_id: s.accountId, currency: acct.currency };
      for await (const page of s.client.pages(s.query, { signal })) {
        if (signal?.aborted) return;
        o.rows += page.length;
        yield page.map((r) => outputRow(src, r));
      }
      o.status = "ok";
      o.error = null;
    } catch (err) {
      if (signal?.aborted) return;
      o.status = "failed";
      o.error = err instanceof ProviderError ? { kind: err.kind, message: err.message } : { kind: "unavailable", message: String((err as Error)?.message ?? err) };
    }
  }
}
