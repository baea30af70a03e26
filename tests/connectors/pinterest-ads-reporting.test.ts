import { ProviderError } from "@trendgate/connector-core";
import { pinterestAds, type ReportQuery, type ReportRow } from "@trendgate/connector-ads";
import { microsOf } from "../../packages/connectors/ads/src/pinterest/report.ts";
import { startPinterestAdsServer, type PinterestAdsServer, type PinterestStats } from "../peers/pinterest-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// Pinterest reporting against the local Pinterest API v5, every request and answer checked against
// Pinterest's published description (specViolations): the ad account's currency; the sync analytics of campaigns, ad
// groups and ads (entities listed through bookmarks, one analytics call per 250 ids, pulled one at a time); the async
// report (submit, poll, download the CSV without our token) for old or long ranges and large accounts; the numbers
// that come out equal the stats seeded in Pinterest's own columns (spend in micro-units of the account currency, UTC
// days); the ad group filter; throttles and the daily cap; an abort stops the work.

const TOKEN = "pina_reporting-test";
const ACCOUNT = "549755885175";
const reporting = pinterestAds.reporting!;
const DAY = 86_400_000;
/** A UTC day n days before today (Pinterest's report days are UTC days). */
const ago = (n: number) => new Date(Math.floor(Date.now() / DAY) * DAY - n * DAY).toISOString().slice(0, 10);

let server: PinterestAdsServer;
beforeEach(async () => { server = await startPinterestAdsServer(); });
afterEach(async () => {
  expect(server.specViolations).toEqual([]);
  await server.close();
});

const client = () => reporting.client({ baseUrl: server.url, accessToken: TOKEN, env: { PINTEREST_ADS_REPORT_POLL_MS: "20" } });
const api = () => server.requests.filter((r) => r.path.startsWith("/v5/"));
const analyticsCalls = () => server.requests.filter((r) => r.path.endsWith("/analytics"));
const polls = () => server.requests.filter((r) => r.path.endsWith("/reports") && r.method === "GET");
async function all(q: ReportQuery, signal?: AbortSignal): Promise<ReportRow[]> {
  const out: ReportRow[] = [];
  for await (const page of client().pages(q, { signal })) out.push(...page);
  return out;
}
const errorOf = (p: Promise<unknown>) => p.then(() => null, (e: ProviderError) => e);

// Two campaigns; Spring has two ad groups (one with two ads), Summer one. Stats per ad per UTC day, as Pinterest
// stores them: paid impressions and clicks, spend in micro-units of the account's currency (GBP), conversions.
const STATS: PinterestStats[] = [
  { adId: "687195134301", date: ago(3), IMPRESSION_1: 1200, CLICKTHROUGH_1: 31, SPEND_IN_MICRO_DOLLAR: 4_250_000, TOTAL_CONVERSIONS: 2, IMPRESSION_2: 999, CLICKTHROUGH_2: 99 },
  { adId: "687195134301", date: ago(2), IMPRESSION_1: 800, CLICKTHROUGH_1: 12, SPEND_IN_MICRO_DOLLAR: 1_999_999 },
  { adId: "687195134302", date: ago(3), IMPRESSION_1: 300, CLICKTHROUGH_1: 4, SPEND_IN_MICRO_DOLLAR: 750_001, TOTAL_CONVERSIONS: 1 },
  { adId: "687195134303", date: ago(2), IMPRESSION_1: 5000, CLICKTHROUGH_1: 77, SPEND_IN_MICRO_DOLLAR: 9_007_199_254_740, TOTAL_CONVERSIONS: 5 },
  { adId: "687195134304", date: ago(3), IMPRESSION_1: 640, CLICKTHROUGH_1: 9, SPEND_IN_MICRO_DOLLAR: 333_333 },
  { adId: "687195134304", date: ago(200), IMPRESSION_1: 10, CLICKTHROUGH_1: 1, SPEND_IN_MICRO_DOLLAR: 1 }, // outside recent ranges
];

function seed() {
  server.addAdAccount({ id: ACCOUNT, name: "Pins UK", currency: "GBP", country: "GB" });
  server.addAdAccount({ id: "549755800000", name: "Someone else's", currency: "USD" });
  server.addToken(TOKEN, { accounts: [ACCOUNT] });
  const spring = server.addCampaign({ adAccountId: ACCOUNT, name: "Spring, UK", id: "626736533501" });
  const summer = server.addCampaign({ adAccountId: ACCOUNT, name: "Summer", id: "626736533502", status: "ARCHIVED" });
  const decor = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: spring.id, name: "Decor \"lovers\"", targetingSpec: { LOCATION: ["GB"] }, id: "2680060704701" });
  const garden = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: spring.id, name: "Gardeners", targetingSpec: { LOCATION: ["GB"] }, id: "2680060704702" });
  const beach = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: summer.id, name: "Beach", targetingSpec: { LOCATION: ["GB"] }, id: "2680060704703", status: "PAUSED" });
  server.addAd({ adAccountId: ACCOUNT, adGroupId: decor.id, name: "Sofa pin", id: "687195134301" });
  server.addAd({ adAccountId: ACCOUNT, adGroupId: decor.id, name: "Lamp pin", id: "687195134302" });
  server.addAd({ adAccountId: ACCOUNT, adGroupId: garden.id, name: "Roses pin", id: "687195134303" });
  server.addAd({ adAccountId: ACCOUNT, adGroupId: beach.id, name: "Towel pin", id: "687195134304" });
  for (const s of STATS) server.addStats(s);
  server.resetLog();
  return { spring, summer, decor, garden, beach };
}

/** The seeded stats summed the way a report row should read them (paid columns, spend as micros, BigInt sums). */
function expected(adIds: string[], dates: string[] | null) {
  const rows = STATS.filter((s) => adIds.includes(s.adId) && (!dates || dates.includes(s.date)) && s.date >= ago(30));
  return {
    impressions: rows.reduce((n, s) => n + Number(s.IMPRESSION_1 ?? 0), 0),
    clicks: rows.reduce((n, s) => n + Number(s.CLICKTHROUGH_1 ?? 0), 0),
    spend_micros: rows.reduce((n, s) => n + BigInt(s.SPEND_IN_MICRO_DOLLAR ?? 0), 0n).toString(),
    conversions: rows.reduce((n, s) => n + Number(s.TOTAL_CONVERSIONS ?? 0), 0),
  };
}

test("the account's currency from Pinterest, and UTC as the report days' time zone", async () => {
  seed();
  await expect(client().account(ACCOUNT)).resolves.toEqual({ currency: "GBP", time_zone: "UTC" });
  expect(api().map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v5/ad_accounts/${ACCOUNT}`]);
  await expect(client().account("549755800000")).rejects.toMatchObject({ kind: "not_found", detail: { status: 403, providerCode: "29" } });
});

test("ad group rows per UTC day equal the seeded stats: paid clicks and impressions, micros exactly, conversions", async () => {
  const { spring, summer, decor, garden, beach } = seed();
  const rows = await all({ accountId: ACCOUNT, level: "ad_group", from: ago(7), to: ago(1), granularity: "day" });
  expect(rows).toEqual([
    { date: ago(3), campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: decor.id, ad_group_name: "Decor \"lovers\"", ad_id: null, ad_name: null, ...expected(["687195134301", "687195134302"], [ago(3)]) },
    { date: ago(2), campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: decor.id, ad_group_name: "Decor \"lovers\"", ad_id: null, ad_name: null, ...expected(["687195134301"], [ago(2)]) },
    { date: ago(2), campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: garden.id, ad_group_name: "Gardeners", ad_id: null, ad_name: null, ...expected(["687195134303"], [ago(2)]) },
    { date: ago(3), campaign_id: summer.id, campaign_name: "Summer", ad_group_id: beach.id, ad_group_name: "Beach", ad_id: null, ad_name: null, ...expected(["687195134304"], [ago(3)]) },
  ]);
  // Spelled out once: 1200 + 300 paid impressions (the 999 earned ones are not counted), 4.25 + 0.750001 GBP.
  expect(rows[0]).toMatchObject({ impressions: 1500, clicks: 35, spend_micros: "5000001", conversions: 3 });
  expect(rows[2].spend_micros).toBe("9007199254740"); // no float rounding
  // A row without TOTAL_CONVERSIONS (Pinterest leaves out a metric with no value) has 0 conversions.
  expect(rows[1].conversions).toBe(0);
  // The sync path: ad groups listed (every status) through bookmarks, then one analytics call with their ids.
  const calls = api();
  expect(calls.map((r) => r.path)).toEqual([`/v5/ad_accounts/${ACCOUNT}/ad_groups`, `/v5/ad_accounts/${ACCOUNT}/ad_groups/analytics`]);
  expect(calls[0].query.entity_statuses).toEqual(["ACTIVE", "PAUSED", "ARCHIVED", "DRAFT", "DELETED_DRAFT"]);
  expect(calls[1].query).toMatchObject({ start_date: [ago(7)], end_date: [ago(1)], granularity: ["DAY"], ad_group_ids: [decor.id, garden.id, beach.id] });
  expect(calls[1].query.columns[0].split(",")).toEqual(expect.arrayContaining(["IMPRESSION_1", "CLICKTHROUGH_1", "SPEND_IN_MICRO_DOLLAR", "TOTAL_CONVERSIONS"]));
  expect(calls[1].category).toBe("ads_analytics");
});

test("campaign totals and ad rows: the level decides which ids are filled", async () => {
  const { spring, summer, decor, beach } = seed();
  const campaigns = await all({ accountId: ACCOUNT, level: "campaign", from: ago(10), to: ago(1), granularity: "total" });
  expect(campaigns).toEqual([
    { date: null, campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, ...expected(["687195134301", "687195134302", "687195134303"], null) },
    { date: null, campaign_id: summer.id, campaign_name: "Summer", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, ...expected(["687195134304"], null) },
  ]);
  expect(campaigns[0].spend_micros).toBe((4_250_000n + 1_999_999n + 750_001n + 9_007_199_254_740n).toString());
  const ads = await all({ accountId: ACCOUNT, level: "ad", from: ago(10), to: ago(1), granularity: "total" });
  expect(ads.map((r) => [r.ad_id, r.ad_name, r.ad_group_id, r.campaign_id, r.impressions])).toEqual([
    ["687195134301", "Sofa pin", decor.id, spring.id, 2000], ["687195134302", "Lamp pin", decor.id, spring.id, 300],
    ["687195134303", "Roses pin", "2680060704702", spring.id, 5000], ["687195134304", "Towel pin", beach.id, summer.id, 640],
  ]);
  expect(ads[0]).toMatchObject({ ad_group_name: "Decor \"lovers\"", campaign_name: "Spring, UK", spend_micros: "6249999", conversions: 2 });
  expect(analyticsCalls().map((r) => r.path)).toEqual([`/v5/ad_accounts/${ACCOUNT}/campaigns/analytics`, `/v5/ad_accounts/${ACCOUNT}/ads/analytics`]);
});

test("adGroupIds: filtered at Pinterest; campaign rows are the sums of those ad groups only", async () => {
  const { spring, decor } = seed();
  const groups = await all({ accountId: ACCOUNT, level: "ad_group", from: ago(10), to: ago(1), granularity: "total", adGroupIds: [decor.id] });
  expect(groups).toEqual([{ date: null, campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: decor.id, ad_group_name: "Decor \"lovers\"", ad_id: null, ad_name: null, ...expected(["687195134301", "687195134302"], null) }]);
  expect(server.requests.filter((r) => r.path.endsWith("/ad_groups")).every((r) => r.query.ad_group_ids?.join() === decor.id)).toBe(true);
  expect(analyticsCalls()[0].query.ad_group_ids).toEqual([decor.id]);
  server.resetLog();
  // Spring's campaign row without Gardeners' 9M GBP: only what Decor lovers delivered.
  const campaigns = await all({ accountId: ACCOUNT, level: "campaign", from: ago(10), to: ago(1), granularity: "day", adGroupIds: [decor.id] });
  expect(campaigns).toEqual([
    { date: ago(3), campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, ...expected(["687195134301", "687195134302"], [ago(3)]) },
    { date: ago(2), campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, ...expected(["687195134301"], [ago(2)]) },
  ]);
  const ads = await all({ accountId: ACCOUNT, level: "ad", from: ago(10), to: ago(1), granularity: "total", adGroupIds: [decor.id] });
  expect(ads.map((r) => r.ad_id)).toEqual(["687195134301", "687195134302"]);
  expect(server.requests.find((r) => r.path.endsWith("/ads"))!.query.ad_group_ids).toEqual([decor.id]);
  expect(await all({ accountId: ACCOUNT, level: "ad_group", from: ago(10), to: ago(1), granularity: "total", adGroupIds: [] })).toEqual([]);
});

test("pages across Pinterest's pages: bookmarks for the listing, one analytics call per 250 ids, each only when pulled", async () => {
  server.addAdAccount({ id: ACCOUNT, name: "Big", currency: "EUR" });
  server.addToken(TOKEN, { accounts: [ACCOUNT] });
  const c = server.addCampaign({ adAccountId: ACCOUNT, name: "Evergreen", id: "626736533501" });
  for (let i = 0; i < 600; i++) {
    const g = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: c.id, name: `Group ${i}`, targetingSpec: { LOCATION: ["DE"] }, id: String(2680060704000 + i) });
    const ad = server.addAd({ adAccountId: ACCOUNT, adGroupId: g.id, name: `Ad ${i}`, id: String(687195134000 + i) });
    server.addStats({ adId: ad.id, date: ago(5), IMPRESSION_1: 100 + i, CLICKTHROUGH_1: i % 7, SPEND_IN_MICRO_DOLLAR: 1_000_000 + i });
  }
  server.resetLog();
  const it = client().pages({ accountId: ACCOUNT, level: "ad_group", from: ago(6), to: ago(4), granularity: "day" }, {})[Symbol.asyncIterator]();
  expect(api()).toHaveLength(0); // nothing before the first pull
  const first = await it.next();
  expect(first.value).toHaveLength(250);
  expect(server.requests.filter((r) => r.path.endsWith("/ad_groups")).map((r) => !!r.query.bookmark)).toEqual([false, true, true]);
  expect(analyticsCalls()).toHaveLength(1);
  const second = await it.next();
  expect(second.value).toHaveLength(250);
  expect(analyticsCalls()).toHaveLength(2);
  const third = await it.next();
  expect(third.value).toHaveLength(100);
  expect((await it.next()).done).toBe(true);
  expect(analyticsCalls().map((r) => r.query.ad_group_ids.length)).toEqual([250, 250, 100]);
  const rows = [...first.value, ...second.value, ...third.value];
  expect(new Set(rows.map((r) => r.ad_group_id)).size).toBe(600);
  expect(rows.find((r) => r.ad_group_id === "2680060704599")).toMatchObject({ date: ago(5), impressions: 699, clicks: 599 % 7, spend_micros: "1000599", ad_group_name: "Group 599" });
});

test("async report for a range the sync endpoints cannot reach: submit, poll with backoff, download the CSV without our token", async () => {
  const { summer, beach } = seed();
  server.setReportJobs({ pollsBeforeDone: 2 });
  const rows = await all({ accountId: ACCOUNT, level: "ad_group", from: ago(200), to: ago(100), granularity: "day" });
  expect(rows).toEqual([{ date: ago(200), campaign_id: summer.id, campaign_name: "Summer", ad_group_id: beach.id, ad_group_name: "Beach", ad_id: null, ad_name: null, impressions: 10, clicks: 1, spend_micros: "1", conversions: 0 }]);
  expect(analyticsCalls()).toHaveLength(0);
  expect(server.reportJobs).toHaveLength(1);
  expect(server.reportJobs[0].body).toMatchObject({ level: "AD_GROUP", granularity: "DAY", start_date: ago(200), end_date: ago(100), report_format: "CSV", click_window_days: 30, view_window_days: 1 });
  expect(server.reportJobs[0].body.columns).toEqual(expect.arrayContaining(["IMPRESSION_1", "CLICKTHROUGH_1", "SPEND_IN_MICRO_DOLLAR", "TOTAL_CONVERSIONS", "AD_GROUP_ID", "CAMPAIGN_ID"]));
  expect(polls().map((r) => r.query.token[0])).toEqual(Array(3).fill(server.reportJobs[0].token)); // IN_PROGRESS twice, then FINISHED
  const [, p2, p3] = polls().map((r) => r.at);
  expect(p3 - p2).toBeGreaterThanOrEqual(70); // the waits double: 20, 40, 80 ms here (1 s, 2 s, 4 s... capped at 15 s by default)
  expect(server.downloads).toEqual([expect.objectContaining({ authorization: false, status: 200 })]);
});

test("async report: the CSV's quoting, the numbers, the ad group filter and campaign sums; a failed job is an error", async () => {
  const { spring, decor } = seed();
  // Within 186 days but longer than the sync endpoints' 90: async.
  const rows = await all({ accountId: ACCOUNT, level: "ad", from: ago(150), to: ago(1), granularity: "total", adGroupIds: [decor.id] });
  expect(rows).toEqual([
    { date: null, campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: decor.id, ad_group_name: "Decor \"lovers\"", ad_id: "687195134301", ad_name: "Sofa pin", ...expected(["687195134301"], null) },
    { date: null, campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: decor.id, ad_group_name: "Decor \"lovers\"", ad_id: "687195134302", ad_name: "Lamp pin", ...expected(["687195134302"], null) },
  ]);
  expect(server.reportJobs[0].body).toMatchObject({ level: "PIN_PROMOTION", ad_group_ids: [decor.id] });
  const campaigns = await all({ accountId: ACCOUNT, level: "campaign", from: ago(150), to: ago(1), granularity: "total", adGroupIds: [decor.id, "2680060704702"] });
  expect(campaigns).toEqual([{ date: null, campaign_id: spring.id, campaign_name: "Spring, UK", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, ...expected(["687195134301", "687195134302", "687195134303"], null) }]);
  server.setReportJobs({ outcome: "FAILED" });
  const e = await errorOf(all({ accountId: ACCOUNT, level: "campaign", from: ago(150), to: ago(1), granularity: "total" }));
  expect(e).toMatchObject({ kind: "unavailable", detail: { providerCode: "FAILED" } });
  expect(server.downloads).toHaveLength(2);
});

test("an account with more entities than the sync path takes gets one async report", async () => {
  server.addAdAccount({ id: ACCOUNT, name: "Huge", currency: "USD" });
  server.addToken(TOKEN, { accounts: [ACCOUNT] });
  for (let i = 0; i < 1001; i++) server.addCampaign({ adAccountId: ACCOUNT, name: `C${i}`, id: String(626736533000 + i) });
  const g = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: "626736533777", name: "G", targetingSpec: { LOCATION: ["US"] }, id: "2680060704701" });
  const ad = server.addAd({ adAccountId: ACCOUNT, adGroupId: g.id, name: "A", id: "687195134301" });
  server.addStats({ adId: ad.id, date: ago(1), IMPRESSION_1: 42, CLICKTHROUGH_1: 2, SPEND_IN_MICRO_DOLLAR: 123_456 });
  server.resetLog();
  const rows = await all({ accountId: ACCOUNT, level: "campaign", from: ago(2), to: ago(1), granularity: "total" });
  expect(rows).toEqual([{ date: null, campaign_id: "626736533777", campaign_name: "C777", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 42, clicks: 2, spend_micros: "123456", conversions: 0 }]);
  expect(server.requests.filter((r) => r.path.endsWith("/campaigns"))).toHaveLength(4); // gave up listing after 1,000
  expect(analyticsCalls()).toHaveLength(0);
  expect(server.reportJobs.map((j) => j.body.level)).toEqual(["CAMPAIGN"]);
});

test("throttles and the Trial daily cap become rate_limited (with Pinterest's reset) and quota_exhausted", async () => {
  seed();
  server.failNext("rate_limit", 1, { category: "ads_analytics", resetS: 7 });
  const q: ReportQuery = { accountId: ACCOUNT, level: "campaign", from: ago(5), to: ago(1), granularity: "total" };
  const e = await errorOf(all(q));
  expect(e).toBeInstanceOf(ProviderError);
  expect(e).toMatchObject({ kind: "rate_limited", detail: { status: 429, providerCode: "8", retryAfterMs: 7000 } });
  expect(server.requests.filter((r) => r.path.endsWith("/campaigns"))).toHaveLength(1); // the listing went through (ads_read)
  server.failNext("trial_cap", 1);
  expect(await errorOf(all(q))).toMatchObject({ kind: "quota_exhausted", detail: { status: 429 } });
  server.failNext("rate_limit", 1, { category: "ads_analytics", resetS: 3 });
  expect(await errorOf(all({ ...q, from: ago(120), to: ago(100) }))).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 3000 } }); // the async submit
  expect(await errorOf(all(q))).toBeNull();
  expect(await errorOf(reporting.client({ baseUrl: server.url, accessToken: "pina_wrong" }).account(ACCOUNT))).toMatchObject({ kind: "unauthorized" });
});

test("ranges Pinterest does not report are refused before any request", async () => {
  seed();
  const q = (from: string, to: string): ReportQuery => ({ accountId: ACCOUNT, level: "campaign", from, to, granularity: "day" });
  expect(await errorOf(all(q(ago(920), ago(900))))).toMatchObject({ kind: "bad_request" }); // beyond 914 days back
  expect(await errorOf(all(q(ago(300), ago(10))))).toMatchObject({ kind: "bad_request" }); // longer than 186 days
  expect(await errorOf(all(q(ago(1), ago(3))))).toMatchObject({ kind: "bad_request" });
  expect(await errorOf(all(q("2026-02-30", ago(1))))).toMatchObject({ kind: "bad_request" });
  expect(await errorOf(all({ ...q(ago(3), ago(1)), adGroupIds: ["AG1"] }))).toMatchObject({ kind: "bad_request" });
  expect(server.requests).toHaveLength(0);
  expect(reporting.capabilities).toMatchObject({ levels: ["campaign", "ad_group", "ad"], granularities: ["day", "total"], maxLookbackDays: 914, maxRangeDays: 186, asyncJobs: true });
});

test("an abort stops the work: no next analytics page, no more polling, no download", async () => {
  server.addAdAccount({ id: ACCOUNT, name: "Big", currency: "EUR" });
  server.addToken(TOKEN, { accounts: [ACCOUNT] });
  const c = server.addCampaign({ adAccountId: ACCOUNT, name: "Evergreen", id: "626736533501" });
  for (let i = 0; i < 300; i++) {
    const g = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: c.id, name: `Group ${i}`, targetingSpec: { LOCATION: ["DE"] }, id: String(2680060704000 + i) });
    server.addStats({ adId: server.addAd({ adAccountId: ACCOUNT, adGroupId: g.id, name: `Ad ${i}` }).id, date: ago(5), IMPRESSION_1: 1, SPEND_IN_MICRO_DOLLAR: 1 });
  }
  server.resetLog();
  const sync = new AbortController();
  const it = client().pages({ accountId: ACCOUNT, level: "ad_group", from: ago(6), to: ago(4), granularity: "day" }, { signal: sync.signal })[Symbol.asyncIterator]();
  expect((await it.next()).value).toHaveLength(250);
  const made = server.requests.length;
  sync.abort();
  await expect(it.next()).rejects.toMatchObject({ name: "AbortError" });
  expect(server.requests.length).toBe(made);
  expect(analyticsCalls()).toHaveLength(1);

  // Async: abandoned while Pinterest is still working on it.
  server.setReportJobs({ pollsBeforeDone: 1000 });
  const job = new AbortController();
  const pending = all({ accountId: ACCOUNT, level: "ad_group", from: ago(150), to: ago(4), granularity: "day" }, job.signal);
  await new Promise((r) => setTimeout(r, 150));
  expect(polls().length).toBeGreaterThanOrEqual(1);
  job.abort();
  await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  await new Promise((r) => setTimeout(r, 100)); // a poll already on the wire when the abort came may still land
  const polled = polls().length;
  await new Promise((r) => setTimeout(r, 500)); // the backoff (20, 40, 80, 160, 320 ms) would have polled again by now
  expect(polls().length).toBe(polled);
  expect(server.downloads).toHaveLength(0);
});

test("the stand-in is strict where the connector could go wrong (so an empty specViolations means something)", async () => {
  seed();
  const get = async (path: string, query: Record<string, string | string[]>, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => {
    const u = new URL(`${server.url}/v5/ad_accounts/${ACCOUNT}/${path}`);
    for (const [k, v] of Object.entries(query)) for (const x of Array.isArray(v) ? v : [v]) u.searchParams.append(k, x);
    const res = await fetch(u, { headers });
    return { status: res.status, body: await res.json() as any };
  };
  const base = { start_date: ago(5), end_date: ago(1), granularity: "TOTAL", campaign_ids: "626736533501" };
  expect((await get("campaigns/analytics", { ...base, columns: "IMPRESSION_1,SPEND_IN_MICRO_DOLLAR" })).status).toBe(200);
  expect(server.specViolations).toEqual([]);
  // Repeated `columns` keys are not what the description's `explode: false` says, and an unknown column is refused.
  await get("campaigns/analytics", { ...base, columns: ["IMPRESSION_1", "NOT_A_COLUMN"] });
  expect(server.specViolations.join()).toMatch(/columns/);
  server.specViolations.length = 0;
  // More than 90 days back is refused by the sync endpoint (the async report reaches further).
  expect(await get("campaigns/analytics", { ...base, start_date: ago(95), columns: "IMPRESSION_1" })).toEqual({ status: 400, body: { code: 400, message: "Invalid ad account campaign analytics parameters." } });
  // The download link refuses our token (a pre-signed URL takes no second credential).
  server.setReportJobs({ pollsBeforeDone: 0 });
  const res = await fetch(`${server.url}/v5/ad_accounts/${ACCOUNT}/reports`, {
    method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ start_date: ago(5), end_date: ago(1), granularity: "TOTAL", level: "CAMPAIGN", columns: ["CAMPAIGN_ID", "IMPRESSION_1"], report_format: "CSV" }),
  });
  const { token } = await res.json() as { token: string };
  const done = await get("reports", { token });
  expect(done.body).toMatchObject({ report_status: "FINISHED", url: expect.stringContaining("X-Amz-Signature=") });
  expect((await fetch(done.body.url, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(400);
  const file = await fetch(done.body.url);
  expect(file.status).toBe(200);
  expect(await file.text()).toBe(`CAMPAIGN_ID,IMPRESSION_1\r\n626736533501,${1200 + 800 + 300 + 5000}\r\n626736533502,640\r\n`);
});

test("spend micros are converted exactly from whatever decimal form Pinterest sends", () => {
  expect(microsOf(4_250_000)).toBe("4250000");
  expect(microsOf("9007199254740993")).toBe("9007199254740993"); // beyond a double's exact integers
  expect(microsOf("12345678.0")).toBe("12345678");
  expect(microsOf("1.5")).toBe("2");
  expect(microsOf("1.4999")).toBe("1");
  expect(microsOf("-2.5")).toBe("-3");
  expect(microsOf("1.2345678E7")).toBe("12345678");
  expect(microsOf(1e21)).toBe("1000000000000000000000");
  expect(microsOf(undefined)).toBe("0");
  expect(() => microsOf("12,5")).toThrow(ProviderError);
});
