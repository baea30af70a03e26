import { ProviderError } from "@trendgate/connector-core";
import { googleAds, type ReportQuery, type ReportRow } from "@trendgate/connector-ads";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// Google Ads reporting against the local Google Ads API: GAQL report queries through googleAds:search,
// rows checked against the stats seeded in Google's own units (cost in micros, int64 as strings, dates already in
// the account's time zone), paging by pageToken one pull at a time, levels and granularities, the ad-group filter
// sent to Google, quota answers onto the framework's kinds, and abort stopping the requests.

let server: GoogleAdsServer;
beforeEach(async () => { server = await startGoogleAdsServer(); });
afterEach(() => server.close());

const reporting = googleAds.reporting!;
const searches = () => server.requests.filter((r) => r.path.endsWith("/googleAds:search"));

function seed() {
  // Tokyo: a UTC-based client would shift every day; Google's days are the account's own.
  const customer = server.addCustomer({ currencyCode: "JPY", timeZone: "Asia/Tokyo" });
  server.addToken("tok", { customers: [customer.id] });
  const c1 = server.addCampaign({ customerId: customer.id, name: "Search: gadgets" });
  const c2 = server.addCampaign({ customerId: customer.id, name: "Search: phones" });
  const g1 = server.addAdGroup({ campaignId: c1.id, name: "AI" });
  const g2 = server.addAdGroup({ campaignId: c1.id, name: "Robots" });
  const g3 = server.addAdGroup({ campaignId: c2.id, name: "Foldables" });
  const a1 = server.addAd({ adGroupId: g1.id }); // a responsive search ad: no name
  const a2 = server.addAd({ adGroupId: g1.id, name: "Legacy text ad", type: "EXPANDED_TEXT_AD" });
  const a3 = server.addAd({ adGroupId: g2.id });
  const a4 = server.addAd({ adGroupId: g3.id });
  const s = (adId: string, date: string, impressions: number, clicks: number, costMicros: string | number, conversions: number) =>
    server.addStats({ adId, date, impressions, clicks, costMicros, conversions });
  s(a1.id, "2026-03-01", 1000, 40, "12345678", 2.5);
  s(a2.id, "2026-03-01", 500, 10, "1000001", 0.3333);
  s(a1.id, "2026-03-02", 800, 25, 9_500_000, 1);
  s(a3.id, "2026-03-01", 300, 3, "450000", 0);
  s(a3.id, "2026-03-02", 200, 2, "9007199254740993", 0); // above 2^53: a float would round it
  s(a4.id, "2026-03-02", 700, 70, "70000000", 7.25);
  s(a4.id, "2026-03-03", 100, 1, "1", 0); // outside the range asked below
  s(a1.id, "2026-02-28", 999, 99, "99", 9); // outside too
  const client = reporting.client({ baseUrl: server.url, accessToken: "tok" });
  return { customer, c1, c2, g1, g2, g3, a1, a2, a3, a4, client };
}

async function all(it: AsyncIterable<ReportRow[]>): Promise<{ pages: ReportRow[][]; rows: ReportRow[] }> {
  const pages: ReportRow[][] = [];
  for await (const p of it) pages.push(p);
  return { pages, rows: pages.flat() };
}
const q = (accountId: string, o: Partial<ReportQuery> = {}): ReportQuery =>
  ({ accountId, level: "ad_group", from: "2026-03-01", to: "2026-03-02", granularity: "day", ...o });
const pick = (r: ReportRow) => [r.date, r.campaign_id, r.ad_group_id, r.ad_id, r.impressions, r.clicks, r.spend_micros, r.conversions];

test("capabilities say what Google counts and that reports are synchronous pages", () => {
  expect(reporting.capabilities).toMatchObject({ levels: ["campaign", "ad_group", "ad"], granularities: ["day", "total"], asyncJobs: false });
  expect(reporting.capabilities.conversions).toMatch(/interaction/);
});

test("account() reads the customer's currency and time zone from Google", async () => {
  const { customer, client } = seed();
  expect(await client.account(customer.id)).toEqual({ currency: "JPY", time_zone: "Asia/Tokyo" });
  expect(searches().at(-1)!.body.query).toMatch(/customer\.currency_code.*customer\.time_zone.*FROM customer/);
});

test("ad-group rows equal the seeded micros and account-day dates, across Google's pages", async () => {
  const { customer, c1, c2, g1, g2, g3, client } = seed();
  server.pageSize = 2;
  const { pages, rows } = await all(client.pages(q(customer.id), {}));
  expect(rows.map(pick)).toEqual([
    ["2026-03-01", c1.id, g1.id, null, 1500, 50, "13345679", 2.8333], // two ads summed by Google
    ["2026-03-02", c1.id, g1.id, null, 800, 25, "9500000", 1],
    ["2026-03-01", c1.id, g2.id, null, 300, 3, "450000", 0],
    ["2026-03-02", c1.id, g2.id, null, 200, 2, "9007199254740993", 0],
    ["2026-03-02", c2.id, g3.id, null, 700, 70, "70000000", 7.25],
  ]);
  expect(rows[0]).toMatchObject({ campaign_name: "Search: gadgets", ad_group_name: "AI", ad_name: null });
  expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
  const sent = searches();
  expect(sent).toHaveLength(3);
  expect(sent[0].body.query).toMatch(/FROM ad_group WHERE segments\.date BETWEEN '2026-03-01' AND '2026-03-02'$/);
  expect(sent[0].body.pageToken).toBeUndefined();
  expect(sent[1].body.pageToken).toBeTruthy();
  expect(sent[2].body.pageToken).not.toBe(sent[1].body.pageToken);
});

test("levels: campaign rows sum their ad groups and leave ad ids null; ad rows carry the ad", async () => {
  const { customer, c1, c2, g1, g3, a1, a2, client } = seed();
  const camp = (await all(client.pages(q(customer.id, { level: "campaign" }), {}))).rows;
  expect(camp.map(pick)).toEqual([
    ["2026-03-01", c1.id, null, null, 1800, 53, "13795679", 2.8333],
    ["2026-03-02", c1.id, null, null, 1000, 27, "9007199264240993", 1],
    ["2026-03-02", c2.id, null, null, 700, 70, "70000000", 7.25],
  ]);
  expect(camp[0].ad_group_name).toBeNull();
  expect(searches().at(-1)!.body.query).toMatch(/ FROM campaign /);

  const ads = (await all(client.pages(q(customer.id, { level: "ad", adGroupIds: [g1.id, g3.id] }), {}))).rows;
  expect(ads.map((r) => [r.date, r.ad_group_id, r.ad_id, r.ad_name, r.spend_micros])).toEqual([
    ["2026-03-01", g1.id, a1.id, null, "12345678"],
    ["2026-03-02", g1.id, a1.id, null, "9500000"],
    ["2026-03-01", g1.id, a2.id, "Legacy text ad", "1000001"],
    [expect.any(String), g3.id, expect.any(String), null, "70000000"],
  ]);
  expect(searches().at(-1)!.body.query).toMatch(/ FROM ad_group_ad WHERE .* AND ad_group\.id IN \(/);
});

test("granularity total: one row per entity over the range, no date", async () => {
  const { customer, c1, g1, client } = seed();
  const rows = (await all(client.pages(q(customer.id, { granularity: "total" }), {}))).rows;
  expect(rows[0]).toMatchObject({ date: null, campaign_id: c1.id, ad_group_id: g1.id, impressions: 2300, clicks: 75, spend_micros: "22845679", conversions: 3.8333 });
  expect(rows).toHaveLength(3);
  const sent = searches().at(-1)!.body.query as string;
  expect(sent).not.toMatch(/SELECT .*segments\.date.* FROM/); // summed by Google, still filtered by date
  expect(sent).toMatch(/WHERE segments\.date BETWEEN/);
});

test("adGroupIds is filtered at Google; a campaign report limited to ad groups sums only theirs, across page boundaries", async () => {
  const { customer, c1, g1, g2, g3, client } = seed();
  const groups = (await all(client.pages(q(customer.id, { adGroupIds: [g2.id] }), {}))).rows;
  expect(groups.map((r) => r.ad_group_id)).toEqual([g2.id, g2.id]);
  expect(searches().at(-1)!.body.query).toMatch(new RegExp(`AND ad_group\\.id IN \\(${g2.id}\\)$`));

  server.pageSize = 1; // each provider page holds one ad-group row: the campaign's day spans pages
  const { pages, rows } = await all(client.pages(q(customer.id, { level: "campaign", adGroupIds: [g1.id, g2.id] }), {}));
  expect(rows.map(pick)).toEqual([
    ["2026-03-01", c1.id, null, null, 1800, 53, "13795679", 2.8333],
    ["2026-03-02", c1.id, null, null, 1000, 27, "9007199264240993", 1],
  ]);
  expect(pages.length).toBeGreaterThanOrEqual(2);
  expect(searches().at(-1)!.body.query).toMatch(/FROM ad_group WHERE .*ad_group\.id IN .* ORDER BY campaign\.id, segments\.date$/);

  const before = searches().length;
  expect((await all(client.pages(q(customer.id, { adGroupIds: [] }), {}))).rows).toEqual([]);
  expect(searches()).toHaveLength(before); // nothing to ask Google
  void g3;
});

test("a throttle mid-report is rate_limited with Google's retry delay; the daily cap is quota_exhausted", async () => {
  const { customer, client } = seed();
  server.pageSize = 2;
  const it = client.pages(q(customer.id), {})[Symbol.asyncIterator]();
  expect((await it.next()).value).toHaveLength(2);
  server.failNext("RESOURCE_TEMPORARILY_EXHAUSTED");
  const throttled = await it.next().catch((e) => e);
  expect(throttled).toBeInstanceOf(ProviderError);
  expect(throttled).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 5000 } });

  server.dailyOperationLimit = server.operationsToday() + 1;
  const daily = await all(client.pages(q(customer.id), {})).catch((e) => e);
  expect(daily).toMatchObject({ kind: "quota_exhausted" });
  expect(daily.detail.resetAt).toBeInstanceOf(Date);
  expect(daily.detail.retryAfterMs).toBeUndefined();

  server.resetDay();
  server.revokeToken("tok");
  await expect(client.account(customer.id)).rejects.toMatchObject({ kind: "unauthorized" });
});

test("pages are fetched only when pulled, and abort stops the requests", async () => {
  const { customer, client } = seed();
  server.pageSize = 1;
  const ac = new AbortController();
  const it = client.pages(q(customer.id), { signal: ac.signal })[Symbol.asyncIterator]();
  expect((await it.next()).value).toHaveLength(1);
  await new Promise((r) => setTimeout(r, 50));
  expect(searches()).toHaveLength(1); // no read-ahead: the consumer has not asked for page 2
  ac.abort();
  await expect(it.next()).rejects.toMatchObject({ name: "AbortError" });
  await new Promise((r) => setTimeout(r, 50));
  expect(searches()).toHaveLength(1);

  const pre = new AbortController();
  pre.abort();
  await expect(all(client.pages(q(customer.id), { signal: pre.signal }))).rejects.toMatchObject({ name: "AbortError" });
  expect(searches()).toHaveLength(1);
});

test("bad queries are refused before Google is asked", async () => {
  const { customer, client } = seed();
  for (const bad of [{ from: "2026-03-05", to: "2026-03-01" }, { from: "2026-3-1" }, { adGroupIds: ["12 OR 1=1"] }, { to: "2026-02-30" }]) {
    await expect(all(client.pages(q(customer.id, bad), {}))).rejects.toMatchObject({ kind: "bad_request" });
  }
  expect(searches()).toHaveLength(0);
});

test("Google's report shape: int64 metrics as strings, and segments.date needs a finite date filter", async () => {
  const { customer } = seed();
  const post = (query: string) => fetch(`${server.url}/v25/customers/${customer.id}/googleAds:search`, {
    method: "POST", headers: { authorization: "Bearer tok", "content-type": "application/json" }, body: JSON.stringify({ query }),
  }).then(async (r) => ({ status: r.status, json: await r.json() as any }));
  const ok = await post("SELECT campaign.id, segments.date, metrics.cost_micros, metrics.conversions FROM campaign WHERE segments.date = '2026-03-02' AND metrics.clicks > 50");
  expect(ok.json.results).toEqual([{ campaign: { resourceName: expect.stringMatching(/campaigns\//), id: expect.any(String) }, segments: { date: "2026-03-02" }, metrics: { costMicros: "70000000", conversions: 7.25 } }]);
  const open = await post("SELECT campaign.id, segments.date, metrics.clicks FROM campaign WHERE segments.date >= '2026-03-01'");
  expect([open.status, open.json.error.details[0].errors[0].errorCode]).toEqual([400, { queryError: "EXPECTED_FILTERS_ON_DATE_RANGE" }]);
});

describe("generated stats (the benchmark's large reports)", () => {
  function generated(adGroups: number, days: number, o: { campaigns?: number; adsPerAdGroup?: number } = {}) {
    const customer = server.addCustomer({ currencyCode: "USD", timeZone: "America/Los_Angeles" });
    server.addToken("tok", { customers: [customer.id] });
    const gen = server.generateStats({ customerId: customer.id, adGroups, days, from: "2026-01-01", ...o });
    return { customer, gen, client: reporting.client({ baseUrl: server.url, accessToken: "tok" }) };
  }
  const totals = (rows: ReportRow[]) => ({
    rows: rows.length, impressions: rows.reduce((a, r) => a + r.impressions, 0), clicks: rows.reduce((a, r) => a + r.clicks, 0),
    costMicros: rows.reduce((a, r) => a + BigInt(r.spend_micros), 0n).toString(), conversions: rows.reduce((a, r) => a + (r.conversions ?? 0), 0),
  });

  test("every level and filter comes to the generator's expected totals, page after page", async () => {
    const { customer, gen, client } = generated(30, 20, { campaigns: 4, adsPerAdGroup: 2 });
    server.pageSize = 70;
    const day = await all(client.pages(q(customer.id, { from: gen.from, to: gen.to }), {}));
    expect(totals(day.rows)).toEqual(gen.expected({ level: "ad_group" }));
    expect(day.pages.length).toBe(Math.ceil(600 / 70));
    expect(new Set(day.rows.map((r) => `${r.ad_group_id}|${r.date}`)).size).toBe(600);

    const range = { from: "2026-01-05", to: "2026-01-12" };
    const ids = [gen.adGroupId(3), gen.adGroupId(17), gen.adGroupId(29)];
    for (const [level, granularity] of [["ad", "day"], ["campaign", "day"], ["ad_group", "total"], ["campaign", "total"]] as const) {
      const got = (await all(client.pages(q(customer.id, { level, granularity, ...range, adGroupIds: ids }), {}))).rows;
      expect([level, granularity, totals(got)]).toEqual([level, granularity, gen.expected({ level, granularity, ...range, adGroupIds: ids })]);
    }
    const camp = (await all(client.pages(q(customer.id, { level: "campaign", ...range }), {}))).rows;
    expect(totals(camp)).toEqual(gen.expected({ level: "campaign", ...range }));
  });

  test("30,000 rows page through at Google's 10,000 a page, one page built at a time", async () => {
    const { customer, gen, client } = generated(300, 100);
    const started = Date.now();
    let pages = 0;
    let rows = 0, impressions = 0, cost = 0n;
    for await (const p of client.pages(q(customer.id, { from: gen.from, to: gen.to }), {})) {
      pages++; rows += p.length;
      for (const r of p) { impressions += r.impressions; cost += BigInt(r.spend_micros); }
    }
    const want = gen.expected({ level: "ad_group" });
    expect({ pages, rows, impressions, cost: cost.toString() }).toEqual({ pages: 3, rows: 30_000, impressions: want.impressions, cost: want.costMicros });
    expect(searches().map((r) => r.query)).toEqual(["?prettyPrint=false", "?prettyPrint=false", "?prettyPrint=false"]); // compact pages
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
