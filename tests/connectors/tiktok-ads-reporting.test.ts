import { ProviderError } from "@trendgate/connector-core";
import { tiktokAds, type ReportQuery, type ReportRow } from "@trendgate/connector-ads";
import { startTikTokAdsServer, TIKTOK_CODES, type TikTokAdsServer } from "../peers/tiktok-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// TikTok Ads reporting against the local TikTok API for Business: the synchronous BASIC report
// /report/integrated/get/ at campaign, ad group and ad level, page by page as the consumer pulls, daily reports split
// into TikTok's 30-day windows, the ad group filter at TikTok (100 ids a filter), spend decimals turned into exact
// micros, dates kept in the advertiser's time zone, the account's currency and time zone from /advertiser/info/,
// 40100 and other `code != 0` answers onto the framework's kinds, and an abort that stops fetching.

const TOKEN = "tt-report-token";
const ADV = "7200000001"; // USD, America/Los_Angeles
const YEN = "7200000002"; // JPY, Asia/Tokyo
const NOT_MINE = "7200000009";

let tt: TikTokAdsServer;
beforeEach(async () => { tt = await startTikTokAdsServer(); });
afterEach(() => tt.close());

const reporting = tiktokAds.reporting!;
const client = () => reporting.client({ baseUrl: tt.url, accessToken: TOKEN });
const reports = () => tt.requests.filter((r) => r.path.endsWith("/report/integrated/get/"));
const q = (over: Partial<ReportQuery>): ReportQuery => ({ accountId: ADV, level: "ad", from: "2026-03-01", to: "2026-03-10", granularity: "day", ...over });
async function all(query: ReportQuery): Promise<ReportRow[]> {
  const out: ReportRow[] = [];
  for await (const page of client().pages(query, {})) out.push(...page);
  return out;
}
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a failure"); }, (e: ProviderError) => e);

/** Two campaigns; Spring has two ad groups (two ads, one ad), Summer one ad group with one ad. */
function seed() {
  tt.addToken(TOKEN, { advertisers: [ADV, YEN] });
  tt.addAdvertiser({ advertiserId: ADV, currency: "USD", timezone: "Etc/GMT+8", displayTimezone: "America/Los_Angeles" });
  const spring = tt.addCampaign({ advertiserId: ADV, name: "Spring" });
  const summer = tt.addCampaign({ advertiserId: ADV, name: "Summer" });
  const coffee = tt.addAdGroup({ advertiserId: ADV, campaignId: spring.campaign_id, name: "Coffee lovers" });
  const runners = tt.addAdGroup({ advertiserId: ADV, campaignId: spring.campaign_id, name: "Runners" });
  const beach = tt.addAdGroup({ advertiserId: ADV, campaignId: summer.campaign_id, name: "Beach" });
  const a1 = tt.addAd({ advertiserId: ADV, adgroupId: coffee.adgroup_id, name: "Latte video" });
  const a2 = tt.addAd({ advertiserId: ADV, adgroupId: coffee.adgroup_id, name: "Beans video" });
  const a3 = tt.addAd({ advertiserId: ADV, adgroupId: runners.adgroup_id, name: "Trail video" });
  const a4 = tt.addAd({ advertiserId: ADV, adgroupId: beach.adgroup_id, name: "Sun video" });
  return { spring, summer, coffee, runners, beach, a1, a2, a3, a4 };
}

test("account(): the advertiser's currency and IANA time zone from /advertiser/info/; not the token's: refused (40001), not needs-reauth", async () => {
  seed();
  tt.addAdvertiser({ advertiserId: YEN, currency: "jpy", timezone: "Etc/GMT-9", displayTimezone: "" });
  expect(await client().account(ADV)).toEqual({ currency: "USD", time_zone: "America/Los_Angeles" });
  // Without display_timezone, TikTok's offset zone (itself an IANA name) is what there is.
  expect(await client().account(YEN)).toEqual({ currency: "JPY", time_zone: "Etc/GMT-9" });
  const info = tt.requests.find((r) => r.path.endsWith("/advertiser/info/"))!;
  expect(JSON.parse(info.query.advertiser_ids)).toEqual([ADV]);
  expect(info.auth).toBe("access-token");
  expect(await failure(client().account(NOT_MINE))).toMatchObject({ kind: "bad_request", detail: { providerCode: "40001" } });
  tt.addToken("all-seeing");
  const missing = await failure(reporting.client({ baseUrl: tt.url, accessToken: "all-seeing" }).account("7200000077"));
  expect(missing.kind).toBe("not_found");
});

test("ad rows equal TikTok's stored rows: spend decimals as exact micros, days as TikTok dated them in the advertiser's zone", async () => {
  const s = seed();
  // 2026-03-08 is the US DST switch: a date parsed as an instant in the wrong zone would move; ours must not.
  tt.addStats({ adId: s.a1.ad_id, date: "2026-03-08", impressions: 1000, clicks: 37, spend: "12.34", conversion: 3 });
  tt.addStats({ adId: s.a1.ad_id, date: "2026-03-01", impressions: 10, clicks: 1, spend: "0.1", conversion: 0 });
  tt.addStats({ adId: s.a4.ad_id, date: "2026-03-10", impressions: 9_000_000, clicks: 4242, spend: "1234567.891", conversion: 17 });
  tt.addStats({ adId: s.a4.ad_id, date: "2026-03-11", impressions: 5, clicks: 5, spend: "5.00" }); // outside the range
  const rows = await all(q({}));
  expect(rows).toEqual([
    { date: "2026-03-01", campaign_id: s.spring.campaign_id, campaign_name: "Spring", ad_group_id: s.coffee.adgroup_id, ad_group_name: "Coffee lovers", ad_id: s.a1.ad_id, ad_name: "Latte video", impressions: 10, clicks: 1, spend_micros: "100000", conversions: 0 },
    { date: "2026-03-08", campaign_id: s.spring.campaign_id, campaign_name: "Spring", ad_group_id: s.coffee.adgroup_id, ad_group_name: "Coffee lovers", ad_id: s.a1.ad_id, ad_name: "Latte video", impressions: 1000, clicks: 37, spend_micros: "12340000", conversions: 3 },
    { date: "2026-03-10", campaign_id: s.summer.campaign_id, campaign_name: "Summer", ad_group_id: s.beach.adgroup_id, ad_group_name: "Beach", ad_id: s.a4.ad_id, ad_name: "Sun video", impressions: 9_000_000, clicks: 4242, spend_micros: "1234567891000", conversions: 17 },
  ].sort((a, b) => (a.ad_id + a.date < b.ad_id + b.date ? -1 : 1)));
  const [r] = reports();
  expect(r.query).toMatchObject({ advertiser_id: ADV, report_type: "BASIC", data_level: "AUCTION_AD", start_date: "2026-03-01", end_date: "2026-03-10" });
  expect(JSON.parse(r.query.dimensions)).toEqual(["ad_id", "stat_time_day"]);
  expect(r.auth).toBe("access-token");
});

test("a yen advertiser in Tokyo: whole-currency spend still scaled to micros, dates untouched", async () => {
  tt.addToken(TOKEN, { advertisers: [YEN] });
  tt.addAdvertiser({ advertiserId: YEN, currency: "JPY", timezone: "Etc/GMT-9", displayTimezone: "Asia/Tokyo" });
  const c = tt.addCampaign({ advertiserId: YEN, name: "Tokyo" });
  const g = tt.addAdGroup({ advertiserId: YEN, campaignId: c.campaign_id, name: "Shibuya" });
  const ad = tt.addAd({ advertiserId: YEN, adgroupId: g.adgroup_id, name: "Ramen" });
  tt.addStats({ adId: ad.ad_id, date: "2026-01-01", impressions: 300, clicks: 12, spend: "1500", conversion: 1 });
  expect(await client().account(YEN)).toEqual({ currency: "JPY", time_zone: "Asia/Tokyo" });
  const rows = await all(q({ accountId: YEN, level: "ad_group", from: "2026-01-01", to: "2026-01-01" }));
  expect(rows).toEqual([{ date: "2026-01-01", campaign_id: c.campaign_id, campaign_name: "Tokyo", ad_group_id: g.adgroup_id, ad_group_name: "Shibuya", ad_id: null, ad_name: null, impressions: 300, clicks: 12, spend_micros: "1500000000", conversions: 1 }]);
});

test("levels: ad group and campaign rows are TikTok's sums (exact: 0.10 + 0.20 is 300000 micros); totals have no date", async () => {
  const s = seed();
  tt.addStats({ adId: s.a1.ad_id, date: "2026-03-02", impressions: 100, clicks: 10, spend: "0.10", conversion: 1 });
  tt.addStats({ adId: s.a2.ad_id, date: "2026-03-02", impressions: 200, clicks: 20, spend: "0.20", conversion: 2 });
  tt.addStats({ adId: s.a3.ad_id, date: "2026-03-02", impressions: 50, clicks: 5, spend: "7.05", conversion: 0 });
  tt.addStats({ adId: s.a3.ad_id, date: "2026-03-03", impressions: 60, clicks: 6, spend: "2.95", conversion: 4 });
  tt.addStats({ adId: s.a4.ad_id, date: "2026-03-03", impressions: 1, clicks: 0, spend: "0.01", conversion: 0 });

  const groups = await all(q({ level: "ad_group" }));
  const coffeeDay = groups.find((r) => r.ad_group_id === s.coffee.adgroup_id)!;
  expect(coffeeDay).toEqual({ date: "2026-03-02", campaign_id: s.spring.campaign_id, campaign_name: "Spring", ad_group_id: s.coffee.adgroup_id, ad_group_name: "Coffee lovers", ad_id: null, ad_name: null, impressions: 300, clicks: 30, spend_micros: "300000", conversions: 3 });
  expect(groups).toHaveLength(4); // coffee 03-02, runners 03-02 and 03-03, beach 03-03

  const campaigns = await all(q({ level: "campaign", granularity: "total" }));
  expect(campaigns.sort((a, b) => (a.campaign_name! < b.campaign_name! ? -1 : 1))).toEqual([
    { date: null, campaign_id: s.spring.campaign_id, campaign_name: "Spring", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 410, clicks: 41, spend_micros: "10300000", conversions: 7 },
    { date: null, campaign_id: s.summer.campaign_id, campaign_name: "Summer", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 1, clicks: 0, spend_micros: "10000", conversions: 0 },
  ]);
  const last = reports().at(-1)!;
  expect(last.query.data_level).toBe("AUCTION_CAMPAIGN");
  expect(JSON.parse(last.query.dimensions)).toEqual(["campaign_id"]);
});

test("pages through TikTok's page numbers only as the consumer pulls (backpressure)", async () => {
  const s = seed();
  // 2,100 ad-day rows: three TikTok pages of at most 1,000.
  const extra = Array.from({ length: 70 }, (_, i) => tt.addAd({ advertiserId: ADV, adgroupId: s.runners.adgroup_id, name: `Ad ${i}` }));
  for (const ad of extra) for (let d = 1; d <= 30; d++) tt.addStats({ adId: ad.ad_id, date: `2026-04-${String(d).padStart(2, "0")}`, impressions: d, clicks: 1, spend: "1.01", conversion: 0 });
  const it = client().pages(q({ from: "2026-04-01", to: "2026-04-30" }), {})[Symbol.asyncIterator]();
  const first = await it.next();
  expect(first.value).toHaveLength(1000);
  expect(reports().map((r) => r.query.page)).toEqual(["1"]); // nothing read ahead
  const rest: ReportRow[] = [];
  for (let n = await it.next(); !n.done; n = await it.next()) rest.push(...n.value);
  expect(reports().map((r) => [r.query.page, r.query.page_size])).toEqual([["1", "1000"], ["2", "1000"], ["3", "1000"]]);
  const rows = [...first.value, ...rest];
  expect(rows).toHaveLength(2100);
  expect(new Set(rows.map((r) => `${r.ad_id}|${r.date}`)).size).toBe(2100);
  expect(rows.reduce((t, r) => t + BigInt(r.spend_micros), 0n)).toBe(2100n * 1_010_000n);
});

test("a daily report longer than TikTok's 30 days goes as consecutive 30-day requests; a total is one request", async () => {
  const s = seed();
  tt.addStats({ adId: s.a1.ad_id, date: "2026-01-01", impressions: 1, clicks: 1, spend: "1.00" });
  tt.addStats({ adId: s.a1.ad_id, date: "2026-02-14", impressions: 2, clicks: 2, spend: "2.00" });
  const rows = await all(q({ from: "2026-01-01", to: "2026-02-14" }));
  expect(rows.map((r) => [r.date, r.spend_micros])).toEqual([["2026-01-01", "1000000"], ["2026-02-14", "2000000"]]);
  expect(reports().map((r) => [r.query.start_date, r.query.end_date])).toEqual([["2026-01-01", "2026-01-30"], ["2026-01-31", "2026-02-14"]]);

  tt.resetLog();
  const total = await all(q({ from: "2026-01-01", to: "2026-02-14", granularity: "total", level: "campaign" }));
  expect(total).toEqual([expect.objectContaining({ date: null, campaign_id: s.spring.campaign_id, impressions: 3, spend_micros: "3000000" })]);
  expect(reports()).toHaveLength(1);

  // TikTok itself refuses a 31-day daily request (what the split avoids), and a total over 365 days is refused here.
  const raw = await fetch(`${tt.url}/open_api/v1.3/report/integrated/get/?${new URLSearchParams({ advertiser_id: ADV, report_type: "BASIC", data_level: "AUCTION_AD", dimensions: '["ad_id","stat_time_day"]', start_date: "2026-01-01", end_date: "2026-01-31" })}`, { headers: { "Access-Token": TOKEN } });
  expect(((await raw.json()) as any).code).toBe(TIKTOK_CODES.invalidParam);
  tt.resetLog();
  expect((await failure(all(q({ from: "2025-01-01", to: "2026-01-01", granularity: "total" })))).kind).toBe("bad_request");
  expect(reports()).toHaveLength(0);
});

test("adGroupIds filter at TikTok (100 ids a filter); campaign rows of only those ad groups are their sums", async () => {
  const s = seed();
  tt.addStats({ adId: s.a1.ad_id, date: "2026-03-02", impressions: 100, clicks: 10, spend: "1.50", conversion: 1 });
  tt.addStats({ adId: s.a3.ad_id, date: "2026-03-02", impressions: 50, clicks: 5, spend: "2.25", conversion: 2 });
  tt.addStats({ adId: s.a4.ad_id, date: "2026-03-02", impressions: 7, clicks: 7, spend: "7.00", conversion: 7 });

  const groups = await all(q({ level: "ad_group", adGroupIds: [s.runners.adgroup_id] }));
  expect(groups.map((r) => [r.ad_group_id, r.spend_micros])).toEqual([[s.runners.adgroup_id, "2250000"]]);
  expect(JSON.parse(reports()[0].query.filtering)).toEqual([{ field_name: "adgroup_ids", filter_type: "IN", filter_value: JSON.stringify([s.runners.adgroup_id]) }]);

  // Spring restricted to Coffee lovers + Runners is 1.50 + 2.25; Beach's campaign appears only for Beach.
  tt.resetLog();
  const camps = await all(q({ level: "campaign", adGroupIds: [s.coffee.adgroup_id, s.runners.adgroup_id] }));
  expect(camps).toEqual([{ date: "2026-03-02", campaign_id: s.spring.campaign_id, campaign_name: "Spring", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 150, clicks: 15, spend_micros: "3750000", conversions: 3 }]);

  // 150 ids: two requests of 100 and 50 ids; the rows are the wanted ones only.
  tt.resetLog();
  const many = [s.beach.adgroup_id, ...Array.from({ length: 149 }, (_, i) => String(9_000_000_000 + i))];
  const ads = await all(q({ level: "ad", adGroupIds: many }));
  expect(ads.map((r) => r.ad_id)).toEqual([s.a4.ad_id]);
  expect(reports().map((r) => JSON.parse(JSON.parse(r.query.filtering)[0].filter_value).length)).toEqual([100, 50]);
});

test("TikTok's failures: 40100 is rate_limited (no retry hint), 50000 unavailable, a revoked token unauthorized, another advertiser refused", async () => {
  const s = seed();
  for (let i = 0; i < 15; i++) tt.addStats({ adId: s.a1.ad_id, date: `2026-03-${String(i + 1).padStart(2, "0")}`, impressions: 1, clicks: 0, spend: "0.01" });
  for (let i = 0; i < 15; i++) tt.addStats({ adId: s.a2.ad_id, date: `2026-03-${String(i + 1).padStart(2, "0")}`, impressions: 1, clicks: 0, spend: "0.01" });
  // A small page so the throttle lands mid-report: the rows already given stay given, the next pull fails.
  const extra = Array.from({ length: 40 }, (_, i) => tt.addAd({ advertiserId: ADV, adgroupId: s.beach.adgroup_id, name: `x${i}` }));
  for (const ad of extra) for (let d = 1; d <= 30; d++) tt.addStats({ adId: ad.ad_id, date: `2026-03-${String(d).padStart(2, "0")}`, impressions: 1, clicks: 0, spend: "0.01" });
  const it = client().pages(q({ from: "2026-03-01", to: "2026-03-30" }), {})[Symbol.asyncIterator]();
  expect((await it.next()).value).toHaveLength(1000);
  tt.failNext("rate_limit", 1);
  const throttled = await failure(it.next());
  expect(throttled).toBeInstanceOf(ProviderError);
  expect(throttled.kind).toBe("rate_limited");
  expect(throttled.retryable).toBe(true);
  expect(throttled.detail.retryAfterMs).toBeUndefined();
  expect(throttled.detail.providerCode).toBe("40100");
  expect(throttled.message).toMatch(/request_id \w+/);

  tt.failNext("system_error", 1);
  expect((await failure(all(q({})))).kind).toBe("unavailable");
  const bad = reporting.client({ baseUrl: tt.url, accessToken: "not-a-token" });
  const unauthorized = await failure((async () => { for await (const _ of bad.pages(q({}), {})) { /* drain */ } })());
  expect(unauthorized.kind).toBe("unauthorized");
  expect((await failure(all(q({ accountId: NOT_MINE })))).kind).toBe("bad_request");
  expect((await failure(all(q({ from: "2026-03-10", to: "2026-03-01" })))).kind).toBe("bad_request");
});

test("abort stops fetching: after a page nothing more is read, and a request in flight is dropped", async () => {
  const s = seed();
  const extra = Array.from({ length: 40 }, (_, i) => tt.addAd({ advertiserId: ADV, adgroupId: s.beach.adgroup_id, name: `x${i}` }));
  for (const ad of extra) for (let d = 1; d <= 30; d++) tt.addStats({ adId: ad.ad_id, date: `2026-03-${String(d).padStart(2, "0")}`, impressions: 1, clicks: 0, spend: "0.01" });
  const ac = new AbortController();
  const it = client().pages(q({ from: "2026-03-01", to: "2026-03-30" }), { signal: ac.signal })[Symbol.asyncIterator]();
  expect((await it.next()).value).toHaveLength(1000);
  ac.abort();
  const stopped = await it.next().then(() => null, (e: Error) => e);
  expect(stopped?.name).toBe("AbortError");
  expect(reports()).toHaveLength(1);

  tt.resetLog();
  tt.delayReports(2000);
  const ac2 = new AbortController();
  const started = Date.now();
  const pending = client().pages(q({ from: "2026-03-01", to: "2026-03-30" }), { signal: ac2.signal })[Symbol.asyncIterator]().next();
  setTimeout(() => ac2.abort(), 100);
  const e = await pending.then(() => null, (err: Error) => err);
  expect(e?.name).toBe("AbortError");
  expect(Date.now() - started).toBeLessThan(1500);
  expect(reports()).toHaveLength(1);
});

test("capabilities say what TikTok reports and how", () => {
  expect(reporting.capabilities).toMatchObject({ levels: ["campaign", "ad_group", "ad"], granularities: ["day", "total"], asyncJobs: false, maxRangeDays: 365 });
  expect(reporting.capabilities.clicks).toMatch(/destination/i);
  expect(reporting.capabilities.conversions).toMatch(/optimization event/);
});
