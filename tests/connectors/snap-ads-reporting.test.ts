import { ProviderError } from "@trendgate/connector-core";
import { snapAds, type ReportQuery, type ReportRow } from "@trendgate/connector-ads";
import { startSnapAdsServer, type SnapAdsServer } from "../peers/snap-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// Snap Ads reporting against the local Snap Marketing API: stats seeded per ad and day in Snap's own units
// (spend in integer micros, swipes, conversion_purchases) come out as normalised rows (spend_micros strings, clicks =
// swipes, dates in the account's time zone), at the campaign, ad squad and ad levels, DAY and TOTAL, through
// account-level breakdowns or per-ad-squad calls for the adGroupIds filter, one provider call per page and only when
// the next page is asked for, with Snap's bare 429 and other failures onto the framework's kinds.

const TOKEN = "snap-report-token";
let server: SnapAdsServer;
beforeEach(async () => { server = await startSnapAdsServer(); });
afterEach(() => server.close());

function seed(account: { currency?: string; timezone?: string } = {}) {
  const acct = server.addAdAccount({ name: "Shoes", ...account });
  server.addToken(TOKEN, { accounts: [acct.id] });
  const spring = server.addCampaign({ adAccountId: acct.id, name: "Spring" });
  const summer = server.addCampaign({ adAccountId: acct.id, name: "Summer" });
  const music = server.addAdSquad({ campaignId: spring.id, name: "Music fans", targeting: { geos: [{ country_code: "us" }] } });
  const gamers = server.addAdSquad({ campaignId: spring.id, name: "Gamers", targeting: { geos: [{ country_code: "us" }] } });
  const uk = server.addAdSquad({ campaignId: summer.id, name: "Everyone UK", targeting: { geos: [{ country_code: "gb" }] } });
  const ad1 = server.addAd({ adSquadId: music.id, name: "Sneaker video" });
  const ad2 = server.addAd({ adSquadId: music.id, name: "Sneaker still" });
  const ad3 = server.addAd({ adSquadId: gamers.id, name: "Gamer cut" });
  const ad4 = server.addAd({ adSquadId: uk.id, name: "UK cut" });
  const reporting = snapAds.reporting!.client({ baseUrl: server.url, accessToken: TOKEN });
  return { acct: acct.id, spring, summer, music, gamers, uk, ad1, ad2, ad3, ad4, reporting };
}

async function all(it: AsyncIterable<ReportRow[]>) {
  const rows: ReportRow[] = [];
  for await (const page of it) rows.push(...page);
  return rows;
}
const statsCalls = () => server.requests.filter((r) => r.path.endsWith("/stats"));
const failure = (p: Promise<unknown>) => p.then(() => null, (e: ProviderError) => e);
const q = (acct: string, over: Partial<ReportQuery>): ReportQuery => ({ accountId: acct, level: "campaign", from: "2026-03-07", to: "2026-03-10", granularity: "day", ...over });
const key = (r: ReportRow) => `${r.date} ${r.campaign_id} ${r.ad_group_id} ${r.ad_id}`;
const sorted = (rows: ReportRow[]) => [...rows].sort((a, b) => key(a).localeCompare(key(b)));

test("the account's currency and time zone come from Snap", async () => {
  const { acct, reporting } = seed({ currency: "EUR", timezone: "Europe/Berlin" });
  expect(await reporting.account(acct)).toEqual({ currency: "EUR", time_zone: "Europe/Berlin" });
  const e = await failure(snapAds.reporting!.client({ baseUrl: server.url, accessToken: "nope" }).account(acct));
  expect(e).toBeInstanceOf(ProviderError);
  expect(e!.kind).toBe("unauthorized");
});

test("campaign rows per day equal the ads' seeded Snap stats: micros as given, swipes as clicks, purchases as conversions", async () => {
  const { acct, spring, summer, ad1, ad2, ad3, ad4, reporting } = seed();
  server.addStats({ adId: ad1.id, date: "2026-03-07", impressions: 1000, swipes: 31, spend: 12_345_678, conversion_purchases: 2 });
  server.addStats({ adId: ad2.id, date: "2026-03-07", impressions: 500, swipes: 4, spend: 1_000_001, conversion_purchases: 0 });
  server.addStats({ adId: ad3.id, date: "2026-03-08", impressions: 70, swipes: 1, spend: 999, conversion_purchases: 1 });
  server.addStats({ adId: ad4.id, date: "2026-03-10", impressions: 4_000_000, swipes: 9000, spend: 987_654_321_012, conversion_purchases: 17 });
  server.addStats({ adId: ad4.id, date: "2026-03-11", impressions: 5, swipes: 5, spend: 5, conversion_purchases: 5 }); // after the range

  const rows = sorted(await all(reporting.pages(q(acct, {}), {})));
  expect(rows).toEqual([
    { date: "2026-03-07", campaign_id: spring.id, campaign_name: "Spring", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 1500, clicks: 35, spend_micros: "13345679", conversions: 2 },
    { date: "2026-03-08", campaign_id: spring.id, campaign_name: "Spring", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 70, clicks: 1, spend_micros: "999", conversions: 1 },
    { date: "2026-03-10", campaign_id: summer.id, campaign_name: "Summer", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 4_000_000, clicks: 9000, spend_micros: "987654321012", conversions: 17 },
  ].sort((a, b) => key(a).localeCompare(key(b))));

  // One account-level call, its window at Los Angeles midnights across the DST change of 2026-03-08.
  const [call] = statsCalls();
  expect(statsCalls()).toHaveLength(1);
  expect(call.path).toBe(`/v1/adaccounts/${acct}/stats`);
  expect(call.query).toMatchObject({
    granularity: "DAY", breakdown: "campaign", fields: "impressions,swipes,spend,conversion_purchases",
    start_time: "2026-03-07T00:00:00.000-08:00", end_time: "2026-03-11T00:00:00.000-07:00",
  });
});

test("dates are the account's days: an Auckland account's rows carry the Auckland dates they were stored under", async () => {
  const { acct, ad1, reporting } = seed({ currency: "NZD", timezone: "Pacific/Auckland" });
  server.addStats({ adId: ad1.id, date: "2026-01-01", impressions: 10, swipes: 1, spend: 2_500_000, conversion_purchases: 0 });
  server.addStats({ adId: ad1.id, date: "2026-01-02", impressions: 20, swipes: 2, spend: 3_500_000, conversion_purchases: 1 });
  const rows = sorted(await all(reporting.pages(q(acct, { level: "ad", from: "2026-01-01", to: "2026-01-02" }), {})));
  expect(rows.map((r) => [r.date, r.impressions, r.spend_micros])).toEqual([["2026-01-01", 10, "2500000"], ["2026-01-02", 20, "3500000"]]);
  expect(statsCalls()[0].query.start_time).toBe("2026-01-01T00:00:00.000+13:00");
});

test("ad squad and ad levels fill their ids and names and nothing deeper; TOTAL sums the range with no date", async () => {
  const { acct, spring, music, gamers, ad1, ad2, ad3, reporting } = seed();
  server.addStats({ adId: ad1.id, date: "2026-03-07", impressions: 100, swipes: 10, spend: 1_000_000, conversion_purchases: 1 });
  server.addStats({ adId: ad1.id, date: "2026-03-09", impressions: 300, swipes: 30, spend: 3_000_000, conversion_purchases: 3 });
  server.addStats({ adId: ad2.id, date: "2026-03-09", impressions: 7, swipes: 0, spend: 70, conversion_purchases: 0 });
  server.addStats({ adId: ad3.id, date: "2026-03-10", impressions: 5, swipes: 1, spend: 50, conversion_purchases: 0 });

  const squads = sorted(await all(reporting.pages(q(acct, { level: "ad_group", granularity: "total" }), {})));
  expect(squads).toEqual(sorted([
    { date: null, campaign_id: spring.id, campaign_name: "Spring", ad_group_id: music.id, ad_group_name: "Music fans", ad_id: null, ad_name: null, impressions: 407, clicks: 40, spend_micros: "4000070", conversions: 4 },
    { date: null, campaign_id: spring.id, campaign_name: "Spring", ad_group_id: gamers.id, ad_group_name: "Gamers", ad_id: null, ad_name: null, impressions: 5, clicks: 1, spend_micros: "50", conversions: 0 },
  ]));
  expect(statsCalls().at(-1)!.query).toMatchObject({ granularity: "TOTAL", breakdown: "adsquad" });

  const ads = sorted(await all(reporting.pages(q(acct, { level: "ad" }), {})));
  expect(ads.map((r) => [r.date, r.ad_id, r.ad_name, r.ad_group_id, r.campaign_id, r.impressions, r.spend_micros])).toEqual(sorted([
    { date: "2026-03-07", ad_id: ad1.id, ad_name: "Sneaker video", ad_group_id: music.id, campaign_id: spring.id, impressions: 100, spend_micros: "1000000" },
    { date: "2026-03-09", ad_id: ad1.id, ad_name: "Sneaker video", ad_group_id: music.id, campaign_id: spring.id, impressions: 300, spend_micros: "3000000" },
    { date: "2026-03-09", ad_id: ad2.id, ad_name: "Sneaker still", ad_group_id: music.id, campaign_id: spring.id, impressions: 7, spend_micros: "70" },
    { date: "2026-03-10", ad_id: ad3.id, ad_name: "Gamer cut", ad_group_id: gamers.id, campaign_id: spring.id, impressions: 5, spend_micros: "50" },
  ] as unknown as ReportRow[]).map((r) => [r.date, r.ad_id, r.ad_name, r.ad_group_id, r.campaign_id, r.impressions, r.spend_micros]));
  expect(statsCalls().at(-1)!.query.breakdown).toBe("ad");
});

test("names come from the account's listings through Snap's cursor pages", async () => {
  const { acct, music, reporting } = seed();
  const many = Array.from({ length: 1001 }, (_, i) => server.addAd({ adSquadId: music.id, name: `Variant ${i}` }));
  server.addStats({ adId: many[1000].id, date: "2026-03-09", impressions: 9, swipes: 1, spend: 90, conversion_purchases: 0 });
  const rows = await all(reporting.pages(q(acct, { level: "ad" }), {}));
  expect(rows.map((r) => [r.ad_id, r.ad_name, r.ad_group_name])).toEqual([[many[1000].id, "Variant 1000", "Music fans"]]);
  const listings = server.requests.filter((r) => r.path === `/v1/adaccounts/${acct}/ads`);
  expect(listings.map((r) => [r.query.limit, !!r.query.cursor])).toEqual([["1000", false], ["1000", true]]);
});

test("a long DAY range is read in windows Snap accepts, one page per window, each fetched only when asked for", async () => {
  const { acct, ad1, ad4, reporting } = seed();
  server.addStats({ adId: ad1.id, date: "2026-01-01", impressions: 1, swipes: 0, spend: 10, conversion_purchases: 0 });
  server.addStats({ adId: ad4.id, date: "2026-01-31", impressions: 2, swipes: 0, spend: 20, conversion_purchases: 0 });
  server.addStats({ adId: ad4.id, date: "2026-02-01", impressions: 3, swipes: 1, spend: 30, conversion_purchases: 0 });
  server.addStats({ adId: ad1.id, date: "2026-02-19", impressions: 4, swipes: 0, spend: 40, conversion_purchases: 1 });

  const it = reporting.pages(q(acct, { from: "2026-01-01", to: "2026-02-19" }), {})[Symbol.asyncIterator]();
  const first = await it.next();
  expect(statsCalls()).toHaveLength(1); // the second window is not fetched before it is asked for
  expect((first.value as ReportRow[]).map((r) => r.date).sort()).toEqual(["2026-01-01", "2026-01-31"]);
  const second = await it.next();
  expect((second.value as ReportRow[]).map((r) => [r.date, r.spend_micros]).sort()).toEqual([["2026-02-01", "30"], ["2026-02-19", "40"]]);
  expect((await it.next()).done).toBe(true);
  expect(statsCalls().map((r) => [r.query.start_time, r.query.end_time])).toEqual([
    ["2026-01-01T00:00:00.000-08:00", "2026-02-01T00:00:00.000-08:00"],
    ["2026-02-01T00:00:00.000-08:00", "2026-02-20T00:00:00.000-08:00"],
  ]);
});

test("adGroupIds are filtered at Snap: only those ad squads' stats are asked for and reported", async () => {
  const { acct, spring, music, gamers, uk, ad1, ad2, ad3, ad4, reporting } = seed();
  for (const ad of [ad1, ad2, ad3, ad4]) server.addStats({ adId: ad.id, date: "2026-03-08", impressions: 10, swipes: 1, spend: 1_000_000, conversion_purchases: 1 });

  const squadRows = await all(reporting.pages(q(acct, { level: "ad_group", adGroupIds: [music.id] }), {}));
  expect(squadRows).toEqual([{ date: "2026-03-08", campaign_id: spring.id, campaign_name: "Spring", ad_group_id: music.id, ad_group_name: "Music fans", ad_id: null, ad_name: null, impressions: 20, clicks: 2, spend_micros: "2000000", conversions: 2 }]);
  expect(statsCalls().map((r) => r.path)).toEqual([`/v1/adsquads/${music.id}/stats`]);

  server.resetLog();
  const adRows = await all(reporting.pages(q(acct, { level: "ad", adGroupIds: [gamers.id, uk.id] }), {}));
  expect(adRows.map((r) => r.ad_id).sort()).toEqual([ad3.id, ad4.id].sort());
  expect(statsCalls().map((r) => [r.path, r.query.breakdown])).toEqual([[`/v1/adsquads/${gamers.id}/stats`, "ad"], [`/v1/adsquads/${uk.id}/stats`, "ad"]]);

  // Campaign rows of chosen ad squads: only their share of the campaign (Spring has two squads with stats).
  const campRows = await all(reporting.pages(q(acct, { level: "campaign", adGroupIds: [gamers.id] }), {}));
  expect(campRows).toEqual([{ date: "2026-03-08", campaign_id: spring.id, campaign_name: "Spring", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, impressions: 10, clicks: 1, spend_micros: "1000000", conversions: 1 }]);

  // An ad squad with nothing in the range gives no row, as the account-level breakdown leaves it out.
  expect(await all(reporting.pages(q(acct, { level: "ad_group", granularity: "total", from: "2026-02-01", to: "2026-02-02", adGroupIds: [uk.id] }), {}))).toEqual([]);
  expect(statsCalls().at(-1)!.path).toBe(`/v1/adsquads/${uk.id}/stats`);

  const e = await failure(all(reporting.pages(q(acct, { level: "ad_group", adGroupIds: ["not-a-squad-of-mine"] }), {})));
  expect(e!.kind).toBe("not_found");
  expect(await all(reporting.pages(q(acct, { adGroupIds: [] }), {}))).toEqual([]);
});

test("Snap's bare 429 is rate_limited with no wait; an expired token unauthorized; a 5xx unavailable; a bad range bad_request", async () => {
  const { acct, reporting } = seed();
  server.addToken("expired", { expiresInS: -1 });
  expect((await failure(all(snapAds.reporting!.client({ baseUrl: server.url, accessToken: "expired" }).pages(q(acct, {}), {}))))!.kind).toBe("unauthorized");
  // The account read and listings pass; the stats call is throttled.
  server.failNext("throttle", 5, /\/stats$/);
  const e = await failure(all(reporting.pages(q(acct, {}), {})));
  expect(e).toBeInstanceOf(ProviderError);
  expect(e!.kind).toBe("rate_limited");
  expect(e!.detail.retryAfterMs).toBeUndefined();
  expect(e!.detail.status).toBe(429);
  expect(statsCalls().map((r) => r.throttled)).toEqual([true]); // no retry loop of our own: the caller backs off

  server.failNext("unavailable", 1, /\/stats$/);
  expect((await failure(all(reporting.pages(q(acct, {}), {}))))!.kind).toBe("unavailable");
  expect((await failure(all(reporting.pages(q(acct, { from: "2026-03-10", to: "2026-03-01" }), {}))))!.kind).toBe("bad_request");
});

test("aborting stops at once: no further stats call after the signal", async () => {
  const { acct, ad1, reporting } = seed();
  server.addStats({ adId: ad1.id, date: "2026-01-02", impressions: 1, swipes: 0, spend: 1, conversion_purchases: 0 });
  server.addStats({ adId: ad1.id, date: "2026-03-02", impressions: 1, swipes: 0, spend: 1, conversion_purchases: 0 });
  const ac = new AbortController();
  const pages: ReportRow[][] = [];
  const e = await (async () => {
    try {
      for await (const page of reporting.pages(q(acct, { from: "2026-01-01", to: "2026-04-30" }), { signal: ac.signal })) {
        pages.push(page);
        ac.abort();
      }
    } catch (err) { return err as Error; }
    return null;
  })();
  expect(e?.name).toBe("AbortError");
  expect(pages).toHaveLength(1);
  expect(statsCalls()).toHaveLength(1); // four windows in the range, one fetched
});

test("the stand-in refuses what Snap refuses: a DAY window not at the account's midnight", async () => {
  const { acct } = seed();
  const url = new URL(`${server.url}/v1/adaccounts/${acct}/stats`);
  url.search = new URLSearchParams({ granularity: "DAY", start_time: "2026-03-07T00:00:00.000Z", end_time: "2026-03-08T08:00:00.000Z" }).toString();
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { display_message: string }).display_message).toMatch(/start of day \(00:00:00\) for the account's timezone\. This account's timezone is: America\/Los_Angeles/);
});
