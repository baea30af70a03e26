import { pipeline } from "node:stream/promises";
import { Readable, Writable } from "node:stream";
import { csvStringifier, outputRow } from "@trendgate/reports";
import type { ReportRow } from "@trendgate/connector-ads";

// Rows from any provider become the same output row: marked with their source, ratios computed by us (ctr from
// clicks and impressions, cpc in integer micros rounded down, BigInt so int64 spend never loses a digit), and the CSV
// quotes per RFC 4180 and defuses cells a spreadsheet would run as formulas.

const row = (over: Partial<ReportRow> = {}): ReportRow => ({
  date: "2026-11-01", campaign_id: "c1", campaign_name: "Spring", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null,
  impressions: 2000, clicks: 30, spend_micros: "12345678", conversions: 2, ...over,
});
const src = { provider: "google_ads", account_id: "1234567890", currency: "EUR" };

test("ratios are ours: ctr = clicks / impressions, cpc in micros rounded down; none without a denominator", () => {
  expect(outputRow(src, row())).toMatchObject({ provider: "google_ads", account_id: "1234567890", currency: "EUR", ctr: 0.015, cpc_micros: "411522" });
  expect(outputRow(src, row({ impressions: 0, clicks: 0 }))).toMatchObject({ ctr: null, cpc_micros: null });
  // int64 spend beyond 2^53 keeps every digit
  expect(outputRow(src, row({ spend_micros: "9007199254740993123", clicks: 7 })).cpc_micros).toBe("1286742750677284731");
});

async function csvOf(rows: ReturnType<typeof outputRow>[]): Promise<string> {
  let out = "";
  await pipeline(Readable.from(rows), csvStringifier(), new Writable({ write(c, _e, done) { out += c; done(); } }));
  return out;
}

test("CSV: a header in column order, RFC 4180 quoting, formula cells defused", async () => {
  const csv = await csvOf([
    outputRow(src, row({ campaign_name: '=HYPERLINK("http://evil.example","click")' })),
    outputRow(src, row({ campaign_name: 'Brand, "quoted"\nline two', date: null, conversions: null })),
  ]);
  const lines = csv.split("\n");
  expect(lines[0]).toBe("date,provider,account_id,campaign_id,campaign_name,ad_group_id,ad_group_name,ad_id,ad_name,impressions,clicks,spend_micros,currency,conversions,ctr,cpc_micros");
  expect(lines[1]).toBe(`2026-11-01,google_ads,1234567890,c1,"'=HYPERLINK(""http://evil.example"",""click"")",,,,,2000,30,12345678,EUR,2,0.015,411522`);
  expect(csv).toContain(`,c1,"Brand, ""quoted""\nline two",,,,,2000,30,12345678,EUR,,0.015,411522\n`);
});
