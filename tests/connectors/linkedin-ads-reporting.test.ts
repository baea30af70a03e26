import { ProviderError } from "@trendgate/connector-core";
import { linkedinAds, type ReportQuery, type ReportRow } from "@trendgate/connector-ads";
import { decimalToMicros } from "../../packages/connectors/ads/src/linkedin/report.ts";
import { startLinkedInAdsServer, type Criteria, type LinkedInAdsServer } from "../peers/linkedin-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// LinkedIn Ads reporting against the local Marketing API: adAnalytics (q=analytics, one pivot, no paging,
// answers cut at 15,000 elements) read at the three levels (LinkedIn campaign group = our campaign, LinkedIn campaign
// = our ad group, creative = our ad), creatives' stats seeded in LinkedIn's own units (costInLocalCurrency decimal
// strings of the account's currency, UTC days) and checked against what comes out (integer micros, the account's
// currency, the same days); windows split under the cap and fetched only when pulled; the ad-group filter sent to
// LinkedIn; throttles and missing scopes onto the framework's kinds; an abort stopping the work.

const TOKEN = "AQtest-linkedin-reporting";
const ACCOUNT = "508000001";
const BARE: Criteria = { include: { and: [{ or: { "urn:li:adTargetingFacet:locations": ["urn:li:geo:101282230"] } }] } };
const G1 = "600000001", G2 = "600000002";
const C1 = "700000001", C2 = "700000002", C3 = "700000003";
const K1 = "800000001", K2 = "800000002", K3 = "800000003", K4 = "800000004";

let server: LinkedInAdsServer;
beforeEach(async () => { server = await startLinkedInAdsServer(); });
afterEach(() => server.close());

function seed(opts: { scopes?: string[] } = {}) {
  server.addAccount({ id: ACCOUNT, name: "Maschinenbau DE", currency: "EUR" });
  server.addToken(TOKEN, { accounts: { [ACCOUNT]: "VIEWER" }, scopes: opts.scopes ?? ["r_ads", "rw_ads", "r_ads_reporting"] });
  server.addGroup({ account: ACCOUNT, id: G1, name: "Spring" });
  server.addGroup({ account: ACCOUNT, id: G2, name: "Summer" });
  server.addCampaign({ account: ACCOUNT, group: G1, id: C1, name: "Engineers DE", targetingCriteria: BARE });
  server.addCampaign({ account: ACCOUNT, group: G1, id: C2, name: "Managers DE", targetingCriteria: BARE });
  server.addCampaign({ account: ACCOUNT, group: G2, id: C3, name: "Students FR", targetingCriteria: BARE });
  server.addCreative({ account: ACCOUNT, campaign: C1, id: K1, name: "Video A" });
  server.addCreative({ account: ACCOUNT, campaign: C1, id: K2, name: "Image B" });
  server.addCreative({ account: ACCOUNT, campaign: C2, id: K3, name: "Carousel" });
  server.addCreative({ account: ACCOUNT, campaign: C3, id: K4 }); // a creative without a name
  // LinkedIn's units: cost a decimal string in EUR, with more decimals than micros hold.
  server.addStats([
    { creative: K1, date: "2026-02-28", impressions: 9999, clicks: 99, costInLocalCurrency: "99", externalWebsiteConversions: 9 }, // before the range
    { creative: K1, date: "2026-03-01", impressions: 1000, clicks: 20, costInLocalCurrency: "10.12345649", externalWebsiteConversions: 2 },
    { creative: K1, date: "2026-03-02", impressions: 500, clicks: 5, costInLocalCurrency: "4.5", externalWebsiteConversions: 0 },
    { creative: K2, date: "2026-03-01", impressions: 300, clicks: 3, costInLocalCurrency: "0.00000001", externalWebsiteConversions: 1 },
    { creative: K3, date: "2026-03-01", impressions: 700, clicks: 7, costInLocalCurrency: "1234567.8912345", externalWebsiteConversions: 4 },
    { creative: K4, date: "2026-03-02", impressions: 50, clicks: 1, costInLocalCurrency: "0.0000005", externalWebsiteConversions: 0 },
  ]);
  return linkedinAds.reporting!.client({ baseUrl: server.url, accessToken: TOKEN });
}

const query = (q: Partial<ReportQuery>): ReportQuery => ({ accountId: ACCOUNT, level: "ad", from: "2026-03-01", to: "2026-03-02", granularity: "day", ...q });
async function all(pages: AsyncIterable<ReportRow[]>) {
  const out: ReportRow[][] = [];
  for await (const p of pages) out.push(p);
  return out;
}
const sorted = (rows: ReportRow[]) => [...rows].sort((a, b) => `${a.date}|${a.campaign_id}|${a.ad_group_id}|${a.ad_id}`.localeCompare(`${b.date}|${b.campaign_id}|${b.ad_group_id}|${b.ad_id}`));
const analyticsCalls = () => server.requests.filter((r) => r.path === "/rest/adAnalytics");
const row = (r: Partial<ReportRow>): ReportRow => ({ date: null, campaign_id: "", campaign_name: null, ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 0, clicks: 0, spend_micros: "0", conversions: 0, ...r });

test("the account's currency comes from adAccounts and its reporting days are UTC (LinkedIn accounts have no time zone)", async () => {
  const client = seed();
  expect(await client.account(ACCOUNT)).toEqual({ currency: "EUR", time_zone: "UTC" });
  expect(await client.account(`urn:li:sponsoredAccount:${ACCOUNT}`)).toEqual({ currency: "EUR", time_zone: "UTC" });
  const call = server.requests.find((r) => r.path === `/rest/adAccounts/${ACCOUNT}`)!;
  expect([call.headers["linkedin-version"], call.headers["x-restli-protocol-version"]]).toEqual(["202608", "2.0.0"]);
  await expect(client.account("508000777")).rejects.toMatchObject({ kind: "bad_request", detail: { status: 403 } });
});

test("ad rows carry LinkedIn's numbers: cost decimals as exact micros of EUR, the same UTC days, names from the entities", async () => {
  const client = seed();
  const pages = await all(client.pages(query({}), {}));
  expect(pages).toHaveLength(1);
  const spring = { campaign_id: G1, campaign_name: "Spring" };
  expect(sorted(pages[0])).toEqual([
    row({ date: "2026-03-01", ...spring, ad_group_id: C1, ad_group_name: "Engineers DE", ad_id: K1, ad_name: "Video A", impressions: 1000, clicks: 20, spend_micros: "10123456", conversions: 2 }),
    row({ date: "2026-03-01", ...spring, ad_group_id: C1, ad_group_name: "Engineers DE", ad_id: K2, ad_name: "Image B", impressions: 300, clicks: 3, spend_micros: "0", conversions: 1 }),
    // 1234567.8912345 EUR: the 7th decimal (5) rounds half-up to the micro; more than 2^53 micros stays exact.
    row({ date: "2026-03-01", ...spring, ad_group_id: C2, ad_group_name: "Managers DE", ad_id: K3, ad_name: "Carousel", impressions: 700, clicks: 7, spend_micros: "1234567891235", conversions: 4 }),
    row({ date: "2026-03-02", ...spring, ad_group_id: C1, ad_group_name: "Engineers DE", ad_id: K1, ad_name: "Video A", impressions: 500, clicks: 5, spend_micros: "4500000", conversions: 0 }),
    row({ date: "2026-03-02", campaign_id: G2, campaign_name: "Summer", ad_group_id: C3, ad_group_name: "Students FR", ad_id: K4, ad_name: null, impressions: 50, clicks: 1, spend_micros: "1", conversions: 0 }),
  ]);
  // One adAnalytics request as LinkedIn documents it (Rest.li 2.0, fields a plain list), then the BATCH_GETs.
  expect(analyticsCalls().map((r) => r.query)).toEqual([{
    q: "analytics", pivot: "CREATIVE", timeGranularity: "DAILY", dateRange: "(start:(year:2026,month:3,day:1),end:(year:2026,month:3,day:2))",
    accounts: `List(urn:li:sponsoredAccount:${ACCOUNT})`, fields: "impressions,clicks,costInLocalCurrency,externalWebsiteConversions,pivotValues,dateRange",
  }]);
  expect(server.requests.map((r) => r.path).filter((p) => p !== "/rest/adAnalytics")).toEqual([
    `/rest/adAccounts/${ACCOUNT}/creatives`, `/rest/adAccounts/${ACCOUNT}/adCampaigns`, `/rest/adAccounts/${ACCOUNT}/adCampaignGroups`,
  ]);
  expect(server.requests.every((r) => r.status === 200 && r.headers["linkedin-version"] === "202608" && r.headers["x-restli-protocol-version"] === "2.0.0")).toBe(true);
});

test("levels: LinkedIn campaigns are our ad groups and campaign groups our campaigns, summed exactly before rounding", async () => {
  const client = seed();
  const adGroups = (await all(client.pages(query({ level: "ad_group" }), {}))).flat();
  expect(sorted(adGroups)).toEqual([
    // 10.12345649 + 0.00000001 = 10.1234565 EUR: LinkedIn sums exactly, we round once.
    row({ date: "2026-03-01", campaign_id: G1, campaign_name: "Spring", ad_group_id: C1, ad_group_name: "Engineers DE", impressions: 1300, clicks: 23, spend_micros: "10123457", conversions: 3 }),
    row({ date: "2026-03-01", campaign_id: G1, campaign_name: "Spring", ad_group_id: C2, ad_group_name: "Managers DE", impressions: 700, clicks: 7, spend_micros: "1234567891235", conversions: 4 }),
    row({ date: "2026-03-02", campaign_id: G1, campaign_name: "Spring", ad_group_id: C1, ad_group_name: "Engineers DE", impressions: 500, clicks: 5, spend_micros: "4500000", conversions: 0 }),
    row({ date: "2026-03-02", campaign_id: G2, campaign_name: "Summer", ad_group_id: C3, ad_group_name: "Students FR", impressions: 50, clicks: 1, spend_micros: "1", conversions: 0 }),
  ]);
  const totals = (await all(client.pages(query({ level: "campaign", granularity: "total" }), {}))).flat();
  expect(sorted(totals)).toEqual([
    row({ campaign_id: G1, campaign_name: "Spring", impressions: 2500, clicks: 35, spend_micros: "1234582514691", conversions: 7 }),
    row({ campaign_id: G2, campaign_name: "Summer", impressions: 50, clicks: 1, spend_micros: "1", conversions: 0 }),
  ]);
  expect(analyticsCalls().map((r) => [r.query.pivot, r.query.timeGranularity])).toEqual([["CAMPAIGN", "DAILY"], ["CAMPAIGN_GROUP", "ALL"]]);
  // Names were read once per client: the second report reused the groups read by the first.
  expect(server.requests.filter((r) => r.path.endsWith("/adCampaignGroups")).length).toBe(1);
});

test("adGroupIds filter at LinkedIn: campaigns=List(...) ANDed with the account, also under a campaign-level report", async () => {
  const client = seed();
  const rows = (await all(client.pages(query({ level: "campaign", granularity: "total", adGroupIds: [C1] }), {}))).flat();
  // Spring without Managers DE: 1000 + 500 + 300 impressions, 14.6234565 EUR.
  expect(rows).toEqual([row({ campaign_id: G1, campaign_name: "Spring", impressions: 1800, clicks: 28, spend_micros: "14623457", conversions: 3 })]);
  const ads = (await all(client.pages(query({ adGroupIds: [`urn:li:sponsoredCampaign:${C3}`] }), {}))).flat();
  expect(ads.map((r) => [r.ad_id, r.ad_group_id, r.campaign_id])).toEqual([[K4, C3, G2]]);
  expect(analyticsCalls().map((r) => r.query.campaigns)).toEqual([`List(urn:li:sponsoredCampaign:${C1})`, `List(urn:li:sponsoredCampaign:${C3})`]);
  expect(analyticsCalls().every((r) => r.query.accounts === `List(urn:li:sponsoredAccount:${ACCOUNT})`)).toBe(true);
  // No ad groups asked: no rows and no request.
  server.resetLog();
  expect(await all(client.pages(query({ adGroupIds: [] }), {}))).toEqual([]);
  expect(server.requests).toHaveLength(0);
});

test("the 15,000-element cap: a cut answer is refetched in halves, windows are pulled one at a time, no row lost or doubled", async () => {
  const client = seed();
  // 500 LinkedIn campaigns x 40 days = 20,000 daily rows; a 31-day window (15,500) would be cut at 15,000.
  const expected = new Map<string, { impressions: number; clicks: number; spend_micros: string }>();
  const stats = [];
  for (let i = 0; i < 500; i++) {
    const c = server.addCampaign({ account: ACCOUNT, group: G2, name: `Bulk ${i}`, targetingCriteria: BARE });
    const k = server.addCreative({ account: ACCOUNT, campaign: c.id });
    for (let d = 0; d < 40; d++) {
      const date = new Date(Date.UTC(2026, 0, 1 + d)).toISOString().slice(0, 10);
      const dd = String(d).padStart(2, "0");
      stats.push({ creative: k.id, date, impressions: i + 1, clicks: d, costInLocalCurrency: `${i}.${dd}0001`, externalWebsiteConversions: 1 });
      expected.set(`${date}|${c.id}`, { impressions: i + 1, clicks: d, spend_micros: BigInt(`${i}${dd}0001`).toString() });
    }
  }
  server.addStats(stats);
  server.resetLog();
  const it = client.pages(query({ level: "ad_group", from: "2026-01-01", to: "2026-02-09" }), {})[Symbol.asyncIterator]();
  const first = await it.next();
  const ranges = () => analyticsCalls().map((r) => r.query.dateRange.replace(/\(year:2026,month:(\d+),day:(\d+)\)/g, "$1/$2"));
  // The full month came back at the cap (maybe cut): thrown away, its first half fetched, nothing further yet.
  expect(ranges()).toEqual(["(start:1/1,end:1/31)", "(start:1/1,end:1/16)"]);
  expect(analyticsCalls()[0].status).toBe(200);
  await new Promise((r) => setTimeout(r, 100));
  expect(analyticsCalls()).toHaveLength(2);
  const pages = [first.value as ReportRow[]];
  for (let n = await it.next(); !n.done; n = await it.next()) pages.push(n.value);
  // Later windows start at the halved size (15 days), so they stay under the cap.
  expect(ranges()).toEqual(["(start:1/1,end:1/31)", "(start:1/1,end:1/16)", "(start:1/17,end:1/31)", "(start:2/1,end:2/9)"]);
  expect(pages.map((p) => p.length)).toEqual([8000, 7500, 4500]);
  const got = new Map(pages.flat().map((r) => [`${r.date}|${r.ad_group_id}`, { impressions: r.impressions, clicks: r.clicks, spend_micros: r.spend_micros }]));
  expect(got.size).toBe(20_000);
  expect(got).toEqual(expected);
  expect(pages.flat().every((r) => r.campaign_id === G2 && r.campaign_name === "Summer" && r.ad_group_name?.startsWith("Bulk ") && r.ad_id === null)).toBe(true);
}, 60_000);

test("one day (or a total) at the cap cannot be split by date: bad_request, not a silently short report", async () => {
  const client = seed();
  const stats = [];
  for (let i = 0; i < 15_000; i++) stats.push({ creative: server.addCreative({ account: ACCOUNT, campaign: C1 }).id, date: "2026-03-05", impressions: 1, clicks: 0, costInLocalCurrency: "0.01", externalWebsiteConversions: 0 });
  server.addStats(stats);
  server.resetLog();
  await expect(all(client.pages(query({ from: "2026-03-05", to: "2026-03-05" }), {}))).rejects.toMatchObject({ kind: "bad_request", message: expect.stringContaining("15000") });
  await expect(all(client.pages(query({ from: "2026-03-04", to: "2026-03-06", granularity: "total" }), {}))).rejects.toMatchObject({ kind: "bad_request", message: expect.stringContaining("ask per day") });
  expect(analyticsCalls()).toHaveLength(2);
  // An ad-group level report of the same day is one row.
  expect((await all(client.pages(query({ level: "ad_group", from: "2026-03-05", to: "2026-03-05" }), {}))).flat()).toEqual([
    row({ date: "2026-03-05", campaign_id: G1, campaign_name: "Spring", ad_group_id: C1, ad_group_name: "Engineers DE", impressions: 15_000, clicks: 0, spend_micros: "150000000", conversions: 0 }),
  ]);
});

test("throttles are rate_limited without a wait hint (LinkedIn sends no Retry-After); a missing scope is refused, a bad token unauthorized", async () => {
  const client = seed();
  server.failNext("throttle", 1);
  const e = await all(client.pages(query({}), {})).then(() => null, (err: ProviderError) => err);
  expect(e).toBeInstanceOf(ProviderError);
  expect(e).toMatchObject({ kind: "rate_limited", retryable: true, detail: { status: 429, providerCode: "TOO_MANY_REQUESTS" } });
  expect(e!.detail.retryAfterMs).toBeUndefined();
  expect(e!.message).toContain("x-li-uuid");
  server.failNext("unavailable", 1);
  await expect(all(client.pages(query({}), {}))).rejects.toMatchObject({ kind: "unavailable", detail: { status: 503 } });
  // The same report answers once LinkedIn does.
  expect((await all(client.pages(query({}), {}))).flat()).toHaveLength(5);

  const noScope = "AQtest-no-reporting";
  server.addToken(noScope, { accounts: { [ACCOUNT]: "CAMPAIGN_MANAGER" }, scopes: ["r_ads", "rw_ads"] });
  const scoped = linkedinAds.reporting!.client({ baseUrl: server.url, accessToken: noScope });
  // LinkedIn's 403 for a missing scope is the same ACCESS_DENIED as for a missing role: a refusal naming the scope.
  await expect(all(scoped.pages(query({}), {}))).rejects.toMatchObject({ kind: "bad_request", detail: { status: 403 }, message: expect.stringContaining("r_ads_reporting") });
  server.expireToken(TOKEN);
  await expect(all(client.pages(query({}), {}))).rejects.toMatchObject({ kind: "unauthorized", detail: { status: 401 } });
});

test("queries LinkedIn cannot answer are refused before any request", async () => {
  const client = seed();
  const refused = async (q: Partial<ReportQuery>) => expect(all(client.pages(query(q), {}))).rejects.toMatchObject({ kind: "bad_request" });
  await refused({ from: "2026-03-02", to: "2026-03-01" });
  await refused({ from: "2026-02-30" });
  await refused({ from: "2015-01-01" }); // beyond the 10 years LinkedIn keeps
  await refused({ accountId: "act_1" });
  await refused({ adGroupIds: ["abc"] });
  await refused({ level: "campaign", adGroupIds: Array.from({ length: 101 }, (_, i) => String(700_100_000 + i)) });
  expect(server.requests).toHaveLength(0);
  expect(linkedinAds.reporting!.capabilities).toMatchObject({ levels: ["campaign", "ad_group", "ad"], granularities: ["day", "total"], asyncJobs: false });
});

test("an abort stops the work: nothing more is fetched after it, and a request in flight is dropped at once", async () => {
  const client = seed();
  server.addStats({ creative: K1, date: "2026-04-10", impressions: 1, clicks: 1, costInLocalCurrency: "1", externalWebsiteConversions: 0 });
  const ac = new AbortController();
  const it = client.pages(query({ from: "2026-03-01", to: "2026-05-31" }), { signal: ac.signal })[Symbol.asyncIterator]();
  expect((await it.next()).value).toHaveLength(5); // March 1..31
  ac.abort();
  await expect(it.next()).rejects.toMatchObject({ name: "AbortError" });
  expect(await it.next()).toEqual({ done: true, value: undefined });
  expect(analyticsCalls()).toHaveLength(1);

  server.setAnalyticsDelay(2000);
  const ac2 = new AbortController();
  const started = Date.now();
  const pending = client.pages(query({}), { signal: ac2.signal })[Symbol.asyncIterator]().next();
  setTimeout(() => ac2.abort(), 100);
  await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  expect(Date.now() - started).toBeLessThan(1500);
  expect(analyticsCalls()).toHaveLength(2);
});

test("the stand-in is as strict as LinkedIn where a client could slip: field lists, the finder, raw URNs", async () => {
  seed();
  const range = "dateRange=(start:(year:2026,month:3,day:1),end:(year:2026,month:3,day:2))";
  const get = (qs: string) => fetch(`${server.url}/rest/adAnalytics?${qs}`, { headers: { authorization: `Bearer ${TOKEN}`, "Linkedin-Version": "202608", "X-Restli-Protocol-Version": "2.0.0" } });
  const base = `q=analytics&pivot=CAMPAIGN&timeGranularity=DAILY&${range}&accounts=List(urn%3Ali%3AsponsoredAccount%3A${ACCOUNT})`;
  const ok = await get(`${base}&fields=pivotValues,costInLocalCurrency`);
  // Only the fields asked for, cost as LinkedIn's decimal string, summed exactly.
  expect(await ok.json()).toEqual({ paging: { start: 0, count: 10, links: [] }, elements: [
    { pivotValues: [`urn:li:sponsoredCampaign:${C1}`], costInLocalCurrency: "10.12345650" },
    { pivotValues: [`urn:li:sponsoredCampaign:${C2}`], costInLocalCurrency: "1234567.8912345" },
    { pivotValues: [`urn:li:sponsoredCampaign:${C1}`], costInLocalCurrency: "4.5" },
    { pivotValues: [`urn:li:sponsoredCampaign:${C3}`], costInLocalCurrency: "0.0000005" },
  ] });
  expect((await get(`${base}&fields=pivotValues%2Cimpressions`)).status).toBe(400);
  expect((await get(base.replace("q=analytics", "q=statistics") + "&fields=impressions")).status).toBe(400);
  expect((await get(base.replace(/accounts=[^&]*/, "accounts=List(urn:li:sponsoredAccount:1)") + "&fields=impressions")).status).toBe(400);
});

test("decimal costs become micros without float math", () => {
  expect(["0", "7", "0.1", "0.0000004", "0.0000005", "12.3456789", "99999999999999.999999", "-1.5"].map(decimalToMicros)).toEqual(
    ["0", "7000000", "100000", "0", "1", "12345679", "99999999999999999999", "-1500000"],
  );
  expect(() => decimalToMicros("1e-7")).toThrow(ProviderError);
  expect(() => decimalToMicros(".")).toThrow(ProviderError);
});
