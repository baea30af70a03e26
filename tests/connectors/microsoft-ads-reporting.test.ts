import crypto from "node:crypto";
import { ProviderError } from "@trendgate/connector-core";
import { microsoftAds, type ReportQuery, type ReportRow } from "@trendgate/connector-ads";
import { CsvReader, microsOf } from "../../packages/connectors/ads/src/microsoft/report.ts";
import { startMicrosoftAdsServer, type MicrosoftAdsServer } from "../peers/microsoft-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// Microsoft Advertising reporting against the local Reporting and Customer Management REST services:
// GetAccount's currency and time zone, SubmitGenerateReport -> PollGenerateReport (Pending, then Success with a
// 5-minute signed URL, null without rows, or Error) -> the ZIP of one CSV downloaded without our credentials and read
// as it streams, in pages. Numbers are checked against the stats seeded in Microsoft's own units (decimal spend of the
// account currency) and the report rows the peer built from them.

const TOKEN = "EwB-reporting-test";
const CUSTOMER = "251000001";

let ms: MicrosoftAdsServer;
beforeEach(async () => { ms = await startMicrosoftAdsServer(); });
afterEach(() => ms.close());

function seed(env: Record<string, string> = {}) {
  const account = ms.addAccount({ customerId: CUSTOMER, name: "Software DE", currency: "EUR", timeZone: "AmsterdamBerlinBernRomeStockholmVienna" });
  const tokyo = ms.addAccount({ customerId: CUSTOMER, name: "Software JP", currency: "JPY", timeZone: "OsakaSapporoTokyo" });
  ms.addToken(TOKEN, { accounts: [account.id, tokyo.id] });
  // A name with the characters a CSV must quote.
  const c1 = ms.addCampaign({ accountId: account.id, name: 'Brand, "DE"' });
  const c2 = ms.addCampaign({ accountId: account.id, name: "Generic" });
  const g1 = ms.addAdGroup({ campaignId: c1.id, name: "Editors" });
  const g2 = ms.addAdGroup({ campaignId: c1.id, name: "IDEs" });
  const g3 = ms.addAdGroup({ campaignId: c2.id, name: "Linters" });
  const reporting = microsoftAds.reporting!;
  const client = reporting.client({
    baseUrl: ms.url, accessToken: TOKEN,
    env: { MICROSOFT_ADS_DEVELOPER_TOKEN: ms.developerToken, MICROSOFT_ADS_REPORT_POLL_SECONDS: "0.01", MICROSOFT_ADS_THROTTLE_WAIT_SECONDS: "0.05", ...env },
  });
  return { acc: `${CUSTOMER}:${account.id}`, jp: `${CUSTOMER}:${tokyo.id}`, account, tokyo, c1, c2, g1, g2, g3, client };
}

async function collect(pages: AsyncIterable<ReportRow[]>): Promise<ReportRow[][]> {
  const out: ReportRow[][] = [];
  for await (const p of pages) out.push(p);
  return out;
}
const q = (acc: string, over: Partial<ReportQuery> = {}): ReportQuery => ({ accountId: acc, level: "ad_group", from: "2026-03-01", to: "2026-03-03", granularity: "day", ...over });
const ops = () => ms.requests.map((r) => r.op);
const submits = () => ms.requests.filter((r) => r.op === "/Reporting/v13/GenerateReport/Submit");

test("account(): the currency and IANA time zone of the account, from Customer Management GetAccount", async () => {
  const { acc, jp, account, client } = seed();
  expect(await client.account(acc)).toEqual({ currency: "EUR", time_zone: "Europe/Berlin" });
  expect(await client.account(jp)).toEqual({ currency: "JPY", time_zone: "Asia/Tokyo" });
  expect(ms.requests[0]).toMatchObject({ method: "POST", op: "/CustomerManagement/v13/Account/Query", body: { AccountId: account.id }, status: 200 }); // a long as its digits
  await expect(client.account(`${CUSTOMER}:180999999`)).rejects.toMatchObject({ kind: "not_found" });
  ms.expireToken(TOKEN);
  await expect(client.account(acc)).rejects.toMatchObject({ kind: "unauthorized", detail: { providerCode: "AuthenticationTokenExpired" } });
});

test("daily ad group rows: exact micros of the account currency, the account's days, through submit, polls and the zipped download", async () => {
  const { acc, account, c1, c2, g1, g2, g3, client } = seed();
  ms.addStats([
    { adGroupId: g1.id, date: "2026-03-01", impressions: 1000, clicks: 20, spend: "12.34", conversions: 2 },
    { adGroupId: g1.id, date: "2026-03-01", impressions: 5, clicks: 1, spend: "0.01", conversions: 0.5, adId: "777", adTitle: "Second ad" },
    { adGroupId: g2.id, date: "2026-03-02", impressions: 3, clicks: 0, spend: "0", conversions: 0 },
    // Above 2^53 micros: a float would lose the last digits.
    { adGroupId: g3.id, date: "2026-03-03", impressions: 9_000_000, clicks: 450_000, spend: "12345678901.23", conversions: 1234 },
    { adGroupId: g3.id, date: "2026-02-28", impressions: 1, clicks: 1, spend: "99.99" }, // outside the range
  ]);
  ms.reportDelay(2);
  const pages = await collect(client.pages(q(acc), {}));
  expect(pages).toEqual([[
    { date: "2026-03-01", campaign_id: c1.id, campaign_name: 'Brand, "DE"', ad_group_id: g1.id, ad_group_name: "Editors", ad_id: null, ad_name: null, impressions: 1005, clicks: 21, spend_micros: "12350000", conversions: 2.5 },
    { date: "2026-03-02", campaign_id: c1.id, campaign_name: 'Brand, "DE"', ad_group_id: g2.id, ad_group_name: "IDEs", ad_id: null, ad_name: null, impressions: 3, clicks: 0, spend_micros: "0", conversions: 0 },
    { date: "2026-03-03", campaign_id: c2.id, campaign_name: "Generic", ad_group_id: g3.id, ad_group_name: "Linters", ad_id: null, ad_name: null, impressions: 9_000_000, clicks: 450_000, spend_micros: "12345678901230000", conversions: 1234 },
  ]]);

  // The async lifecycle: GetAccount, submit, two Pending polls, Success, then the download (no credentials sent).
  expect(ops()).toEqual(["/CustomerManagement/v13/Account/Query", "/Reporting/v13/GenerateReport/Submit", ...Array(3).fill("/Reporting/v13/GenerateReport/Poll")]);
  expect(ms.reports).toMatchObject([{ polls: 3, status: "Success", rows: 3 }]);
  expect(ms.downloads).toMatchObject([{ status: 200, authorization: false, closedEarly: false }]);
  const poll = ms.requests.at(-1)!;
  expect(poll.body).toEqual({ ReportRequestId: ms.reports[0].id });
  expect(poll.headers).toMatchObject({ customerid: CUSTOMER, customeraccountid: account.id });
  expect(submits()[0].body.ReportRequest).toMatchObject({
    Type: "AdGroupPerformanceReportRequest", Aggregation: "Daily", Format: "Csv", ExcludeReportHeader: true, ExcludeReportFooter: true,
    Columns: ["TimePeriod", "AccountId", "CampaignId", "CampaignName", "AdGroupId", "AdGroupName", "Impressions", "Clicks", "Spend", "Conversions"],
    Scope: { AccountIds: [account.id] }, // longs as strings, as in Microsoft's JSON templates
    Time: { CustomDateRangeStart: { Day: 1, Month: 3, Year: 2026 }, CustomDateRangeEnd: { Day: 3, Month: 3, Year: 2026 }, ReportTimeZone: "AmsterdamBerlinBernRomeStockholmVienna" },
  });
});

test("levels: campaign totals leave ad group and ad ids null; ad rows carry the ad id and title", async () => {
  const { acc, c1, c2, g1, g2, g3, client } = seed();
  ms.addStats([
    { adGroupId: g1.id, date: "2026-03-01", impressions: 10, clicks: 2, spend: "1.10", conversions: 1 },
    { adGroupId: g2.id, date: "2026-03-02", impressions: 20, clicks: 3, spend: "2.25", conversions: 0 },
    { adGroupId: g3.id, date: "2026-03-02", impressions: 7, clicks: 1, spend: "0.07", adId: "9001", adTitle: "Lint, faster" },
  ]);
  const [campaigns] = await collect(client.pages(q(acc, { level: "campaign", granularity: "total" }), {}));
  expect(campaigns).toEqual([
    { date: null, campaign_id: c1.id, campaign_name: 'Brand, "DE"', ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 30, clicks: 5, spend_micros: "3350000", conversions: 1 },
    { date: null, campaign_id: c2.id, campaign_name: "Generic", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 7, clicks: 1, spend_micros: "70000", conversions: 0 },
  ]);
  expect(submits()[0].body.ReportRequest).toMatchObject({ Type: "CampaignPerformanceReportRequest", Aggregation: "Summary", Columns: ["AccountId", "CampaignId", "CampaignName", "Impressions", "Clicks", "Spend", "Conversions"] });

  const [ads] = await collect(client.pages(q(acc, { level: "ad", from: "2026-03-02", to: "2026-03-02" }), {}));
  expect(ads.map((r) => [r.date, r.campaign_id, r.ad_group_id, r.ad_id, r.ad_name, r.spend_micros])).toEqual([
    ["2026-03-02", c1.id, g2.id, `${g2.id}0001`, "Ad of IDEs", "2250000"],
    ["2026-03-02", c2.id, g3.id, "9001", "Lint, faster", "70000"],
  ]);
  expect(submits()[1].body.ReportRequest.Type).toBe("AdPerformanceReportRequest");
});

test("adGroupIds: ad group rows filtered; campaign rows summed from the chosen ad groups only", async () => {
  const { acc, c1, g1, g2, g3, client } = seed();
  ms.addStats([
    { adGroupId: g1.id, date: "2026-03-01", impressions: 10, clicks: 2, spend: "1.10" },
    { adGroupId: g2.id, date: "2026-03-01", impressions: 20, clicks: 3, spend: "2.25" },
    { adGroupId: g2.id, date: "2026-03-01", impressions: 1, clicks: 1, spend: "0.05", adId: "55" },
    { adGroupId: g3.id, date: "2026-03-01", impressions: 7, clicks: 1, spend: "0.07" },
  ]);
  const [groups] = await collect(client.pages(q(acc, { adGroupIds: [g2.id, g3.id] }), {}));
  expect(groups.map((r) => [r.ad_group_id, r.impressions, r.spend_micros])).toEqual([[g2.id, 21, "2300000"], [g3.id, 7, "70000"]]);

  const [campaign] = await collect(client.pages(q(acc, { level: "campaign", adGroupIds: [g2.id] }), {}));
  expect(campaign).toEqual([{ date: "2026-03-01", campaign_id: c1.id, campaign_name: 'Brand, "DE"', ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 21, clicks: 4, spend_micros: "2300000", conversions: 0 }]);
  // A campaign report has no ad group scope: the sums come from the ad group report.
  expect(submits()[1].body.ReportRequest.Type).toBe("AdGroupPerformanceReportRequest");

  expect(await collect(client.pages(q(acc, { adGroupIds: ["123456"] }), {}))).toEqual([]);
});

test("pages of 1,000 rows across the one downloaded file, nothing lost", async () => {
  const { acc, g1, g2, g3, client } = seed();
  const groups = [g1, g2, g3];
  const seeded = Array.from({ length: 2500 }, (_, i) => ({
    adGroupId: groups[i % 3].id, date: `2026-03-0${1 + (i % 3)}`, impressions: i, clicks: i % 7, spend: `${i}.${String(i % 100).padStart(2, "0")}`, adId: String(5_000_000 + i), adTitle: `Ad "${i}", v${i % 5}`,
  }));
  ms.addStats(seeded);
  const pages = await collect(client.pages(q(acc, { level: "ad" }), {}));
  expect(pages.map((p) => p.length)).toEqual([1000, 1000, 500]);
  const rows = pages.flat();
  expect(new Set(rows.map((r) => r.ad_id)).size).toBe(2500);
  const total = (xs: { spend: string }[]) => xs.reduce((s, x) => s + BigInt(microsOf(x.spend)), 0n);
  expect(rows.reduce((s, r) => s + BigInt(r.spend_micros), 0n)).toBe(total(seeded));
  const byAd = new Map(rows.map((r) => [r.ad_id, r]));
  for (const s of [seeded[0], seeded[1234], seeded[2499]]) {
    expect(byAd.get(s.adId)).toMatchObject({ ad_group_id: s.adGroupId, date: s.date, impressions: s.impressions, clicks: s.clicks, ad_name: s.adTitle, spend_micros: microsOf(s.spend) });
  }
  expect(ms.downloads).toHaveLength(1);
});

test("backpressure: a consumer that stops after the first page leaves the rest of the download unread", async () => {
  const { acc, g1, client } = seed();
  // Incompressible titles make a ZIP of many 16 KiB writes; a link slower than loopback (10 ms a write) lets the
  // test see where reading stopped.
  ms.downloadPace(10);
  ms.addStats(Array.from({ length: 10_000 }, (_, i) => ({ adGroupId: g1.id, date: "2026-03-01", impressions: 1, clicks: 0, spend: "0.01", adId: String(7_000_000 + i), adTitle: crypto.randomBytes(48).toString("hex") })));
  for await (const page of client.pages(q(acc, { level: "ad" }), {})) {
    expect(page).toHaveLength(1000);
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
  const [d] = ms.downloads;
  expect(d.total).toBeGreaterThan(500_000);
  expect(d.bytes).toBeLessThan(d.total);
  expect(d.closedEarly).toBe(true);
});

test("no data: Success without a URL yields nothing and downloads nothing; an end date after today is today in the account's zone", async () => {
  const { jp, client } = seed();
  const tomorrow = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
  expect(await collect(client.pages(q(jp, { from: "2026-03-01", to: tomorrow }), {}))).toEqual([]);
  expect(ms.reports).toMatchObject([{ status: "Success", rows: 0 }]);
  expect(ms.downloads).toEqual([]);
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Asia/Tokyo", year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
  const end = submits()[0].body.ReportRequest.Time.CustomDateRangeEnd;
  expect(`${end.Year}-${String(end.Month).padStart(2, "0")}-${String(end.Day).padStart(2, "0")}`).toBe(today);
  expect(submits()[0].body.ReportRequest.Time.ReportTimeZone).toBe("OsakaSapporoTokyo");
});

test("117 CallRateExceeded: a throttled submit is rate_limited with Microsoft's wait; a throttled poll waits and polls again", async () => {
  const { acc, g1, client } = seed({ MICROSOFT_ADS_REPORT_POLL_SECONDS: "0.1" });
  ms.addStats([{ adGroupId: g1.id, date: "2026-03-01", impressions: 4, clicks: 1, spend: "0.40" }]);
  ms.failNext("call_rate", 1, "/Reporting/v13/GenerateReport/Submit");
  const err = await collect(client.pages(q(acc), {})).catch((e) => e);
  expect(err).toBeInstanceOf(ProviderError);
  expect(err).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 50, providerCode: "CallRateExceeded" } });
  expect(ms.requests.map((r) => [r.op, r.throttled])).toEqual([["/CustomerManagement/v13/Account/Query", false], ["/Reporting/v13/GenerateReport/Submit", true]]);
  expect(ms.reports).toHaveLength(0);

  ms.resetLog();
  ms.reportDelay(2);
  const run = collect(client.pages(q(acc), {}));
  while (!ms.reports.length) await new Promise((r) => setTimeout(r, 5));
  ms.failNext("call_rate", 1, "/Reporting/v13/GenerateReport/Poll");
  const pages = await run;
  expect(pages.flat().map((r) => r.spend_micros)).toEqual(["400000"]);
  const polls = ms.requests.filter((r) => r.op === "/Reporting/v13/GenerateReport/Poll");
  expect(polls.map((r) => r.throttled)).toEqual([true, false, false, false]);
  expect(ms.reports).toHaveLength(1); // the job survived the throttle: not submitted again
});

test("a report that ends in Error is unavailable; an expired download URL is signed again by a new poll", async () => {
  const { acc, g1, client } = seed();
  ms.addStats([{ adGroupId: g1.id, date: "2026-03-02", impressions: 4, clicks: 1, spend: "0.40" }]);
  ms.failReports(1);
  await expect(collect(client.pages(q(acc), {}))).rejects.toMatchObject({ kind: "unavailable", detail: { providerCode: "report_error" } });
  expect(ms.downloads).toEqual([]);

  ms.resetLog();
  ms.expireUrls(1);
  const pages = await collect(client.pages(q(acc), {}));
  expect(pages.flat().map((r) => [r.date, r.spend_micros])).toEqual([["2026-03-02", "400000"]]);
  expect(ms.downloads.map((d) => d.status)).toEqual([403, 200]);
  expect(ms.reports).toHaveLength(1);
});

test("abort: polling stops at once and nothing more is asked of Microsoft", async () => {
  const { acc, g1, client } = seed();
  ms.addStats([{ adGroupId: g1.id, date: "2026-03-02", impressions: 4, clicks: 1, spend: "0.40" }]);
  ms.reportDelay(1_000_000);
  const ac = new AbortController();
  const run = collect(client.pages(q(acc), { signal: ac.signal }));
  while (ms.reports.length === 0 || ms.reports[0].polls < 2) await new Promise((r) => setTimeout(r, 5));
  const started = Date.now();
  ac.abort();
  await expect(run).rejects.toMatchObject({ name: "AbortError" });
  expect(Date.now() - started).toBeLessThan(200);
  const count = ms.requests.length;
  await new Promise((r) => setTimeout(r, 300));
  expect(ms.requests.length).toBe(count);
  expect(ms.downloads).toEqual([]);

  // Aborted before it starts: not even GetAccount.
  ms.resetLog();
  await expect(collect(client.pages(q(acc), { signal: AbortSignal.abort() }))).rejects.toMatchObject({ name: "AbortError" });
  expect(ms.requests).toEqual([]);
});

test("bad queries are refused before any call", async () => {
  const { acc, client } = seed();
  await expect(collect(client.pages(q("180000001"), {}))).rejects.toMatchObject({ kind: "bad_request" });
  await expect(collect(client.pages(q(acc, { from: "2026-03-05", to: "2026-03-01" }), {}))).rejects.toMatchObject({ kind: "bad_request" });
  await expect(collect(client.pages(q(acc, { from: "2020-01-01", to: "2026-03-01" }), {}))).rejects.toMatchObject({ kind: "bad_request" });
  expect(ms.requests).toEqual([]);
  expect(microsoftAds.reporting!.capabilities).toMatchObject({ levels: ["campaign", "ad_group", "ad"], granularities: ["day", "total"], asyncJobs: true });
});

test("decimal spend to micros exactly; the CSV reader across chunk boundaries", () => {
  expect(["0", "0.1", "12.34", "1,234.5", "-0.004", "12345678901.23", "0.0000005", "0.0000004", "7"].map(microsOf))
    .toEqual(["0", "100000", "12340000", "1234500000", "-4000", "12345678901230000", "1", "0", "7000000"]);
  const text = '\uFEFF"A","B"\r\n"x, ""y""","line\nbreak"\r\n\r\nplain,"2"\n';
  const out: string[][] = [];
  const r = new CsvReader();
  for (const ch of text.replace("\uFEFF", "")) r.push(ch, out);
  r.end(out);
  expect(out).toEqual([["A", "B"], ['x, "y"', "line\nbreak"], ["plain", "2"]]);
});
