import { ProviderError } from "@trendgate/connector-core";
import { metaAds, type ReportQuery, type ReportRow } from "@trendgate/connector-ads";
import { CONVERSION_ACTION_TYPES, decimalToMicros, MetaAdsReportingClient, usesAsync } from "../../packages/connectors/ads/src/meta/report.ts";
import { META_SUBCODES, startMetaAdsServer, type MetaAdsServer, type MetaStatsRow } from "../peers/meta-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// Meta reporting against the local Graph API's insights endpoints: rows seeded as Meta stores them (one
// per ad and account-local day, spend a decimal string of the account's currency, conversions inside `actions`) come
// out normalised (integer micros, the account's currency and time zone, counted conversions), through Graph cursor
// pages pulled one at a time, sync or as an async report run (submit, poll, page), with Meta's throttles mapped.

const TOKEN = "EAAtest-meta-reporting";
const ACCOUNT = "1234567890";
const YEN = "2222222222";

let server: MetaAdsServer;
beforeEach(async () => { server = await startMetaAdsServer(); });
afterEach(() => server.close());

/** The connector's own reporting client (the one the catalog and exports use). */
const reporting = () => metaAds.reporting!.client({ baseUrl: server.url, accessToken: TOKEN });
/** The same client with fast polling, for async runs (Meta's own pace starts at 1 s). */
const fastClient = () => new MetaAdsReportingClient({ baseUrl: server.url, accessToken: TOKEN }, { pollFirstMs: 5, pollMaxMs: 20 });

function seedAccounts() {
  server.addAdAccount({ id: `act_${ACCOUNT}`, name: "Shoes US", currency: "USD", timezoneName: "America/Los_Angeles" });
  server.addAdAccount({ id: `act_${YEN}`, name: "Shoes JP", currency: "JPY", timezoneName: "Asia/Tokyo" });
  server.addToken(TOKEN);
}

const q = (over: Partial<ReportQuery> = {}): ReportQuery => ({ accountId: `act_${ACCOUNT}`, level: "ad_group", from: "2026-11-01", to: "2026-11-03", granularity: "day", ...over });

async function all(it: AsyncIterable<ReportRow[]>): Promise<{ rows: ReportRow[]; pages: number }> {
  const rows: ReportRow[] = [];
  let pages = 0;
  for await (const p of it) { rows.push(...p); pages++; }
  return { rows, pages };
}

const insightCalls = () => server.requests.filter((r) => /\/insights$/.test(r.path) || /^\/v27\.0\/\d+$/.test(r.path));
const fail = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a failure"); }, (e: unknown) => e as ProviderError);

/** Campaign 900 with ad sets 910 and 920; ad 911 in 910, ads 921 and 922 in 920. */
function seedShop(): MetaStatsRow[] {
  const base = { accountId: ACCOUNT, campaignId: "900", campaignName: "Spring" };
  const rows: MetaStatsRow[] = [
    { ...base, date: "2026-11-01", adsetId: "910", adsetName: "Runners", adId: "911", adName: "Shoe A", impressions: "1000", clicks: "31", spend: "12.34",
      actions: [
        { action_type: "link_click", value: "20" },
        { action_type: "offsite_conversion.fb_pixel_purchase", value: "2" },
        // Meta's aggregates of the same purchase: not counted again.
        { action_type: "purchase", value: "2" }, { action_type: "omni_purchase", value: "2" },
        { action_type: "offsite_conversion.fb_pixel_view_content", value: "9" },
      ] },
    // 0.10 + 0.20 in the same ad set: exact 0.30 (float math gives 0.30000000000000004).
    { ...base, date: "2026-11-02", adsetId: "920", adsetName: "Walkers", adId: "921", adName: "Shoe B", impressions: 500, clicks: 7, spend: "0.10",
      actions: [{ action_type: "offsite_conversion.fb_pixel_lead", value: "1" }] },
    { ...base, date: "2026-11-02", adsetId: "920", adsetName: "Walkers", adId: "922", adName: "Shoe C", impressions: 250, clicks: 3, spend: "0.20",
      actions: [{ action_type: "offsite_conversion.fb_pixel_complete_registration", value: "3" }] },
    // No actions at all: Meta leaves the field out.
    { ...base, date: "2026-11-03", adsetId: "910", adsetName: "Runners", adId: "911", adName: "Shoe A", impressions: "80", clicks: "0", spend: "0.99" },
    // Outside the range: not reported.
    { ...base, date: "2026-10-31", adsetId: "910", adsetName: "Runners", adId: "911", adName: "Shoe A", impressions: "9999", clicks: "99", spend: "99.00" },
  ];
  server.addStats(...rows);
  return rows;
}

test("account(): the ad account's currency and time zone, read from Meta", async () => {
  seedAccounts();
  await expect(reporting().account(`act_${YEN}`)).resolves.toEqual({ currency: "JPY", time_zone: "Asia/Tokyo" });
  await expect(reporting().account(ACCOUNT)).resolves.toEqual({ currency: "USD", time_zone: "America/Los_Angeles" });
  const reads = server.requests.filter((r) => r.path === `/v27.0/act_${YEN}`);
  expect(reads.map((r) => [r.query.fields, r.auth])).toEqual([["currency,timezone_name", "header"]]);
});

test("daily ad set rows: the provider's numbers, spend as exact micros, account-local dates, counted conversions", async () => {
  seedAccounts();
  seedShop();
  const { rows } = await all(reporting().pages(q(), {}));
  expect(rows).toEqual([
    { date: "2026-11-01", campaign_id: "900", campaign_name: "Spring", ad_group_id: "910", ad_group_name: "Runners", ad_id: null, ad_name: null,
      impressions: 1000, clicks: 31, spend_micros: "12340000", conversions: 2 },
    { date: "2026-11-02", campaign_id: "900", campaign_name: "Spring", ad_group_id: "920", ad_group_name: "Walkers", ad_id: null, ad_name: null,
      impressions: 750, clicks: 10, spend_micros: "300000", conversions: 4 },
    { date: "2026-11-03", campaign_id: "900", campaign_name: "Spring", ad_group_id: "910", ad_group_name: "Runners", ad_id: null, ad_name: null,
      impressions: 80, clicks: 0, spend_micros: "990000", conversions: 0 },
  ]);
  // What Meta was asked: the level's ids and the metrics, the range and daily rows, a sync GET.
  const [call] = insightCalls();
  expect(call.method).toBe("GET");
  expect(call.query).toMatchObject({
    level: "adset", time_increment: "1", fields: "campaign_id,campaign_name,adset_id,adset_name,impressions,clicks,spend,actions",
  });
  expect(JSON.parse(call.query.time_range)).toEqual({ since: "2026-11-01", until: "2026-11-03" });
});

test("a JPY account in Tokyo: whole-yen spend into micros, dates as Meta's account-local days", async () => {
  seedAccounts();
  // Meta's day is the account's (Asia/Tokyo): seeded and read back as the same calendar dates, not shifted to UTC.
  server.addStats(
    { accountId: YEN, date: "2026-11-01", campaignId: "700", campaignName: "秋", adsetId: "710", adsetName: "東京", adId: "711", adName: "A", impressions: 12, clicks: 1, spend: "1500" },
    { accountId: YEN, date: "2026-11-02", campaignId: "700", campaignName: "秋", adsetId: "710", adsetName: "東京", adId: "711", adName: "A", impressions: 8, clicks: 0, spend: "37" },
  );
  const client = reporting();
  const { currency, time_zone } = await client.account(YEN);
  const { rows } = await all(client.pages(q({ accountId: YEN, level: "campaign" }), {}));
  expect({ currency, time_zone }).toEqual({ currency: "JPY", time_zone: "Asia/Tokyo" });
  expect(rows.map((r) => [r.date, r.campaign_name, r.spend_micros, r.impressions])).toEqual([["2026-11-01", "秋", "1500000000", 12], ["2026-11-02", "秋", "37000000", 8]]);
});

test("levels decide which ids are filled; total granularity has no date", async () => {
  seedAccounts();
  seedShop();
  const client = reporting();
  const campaign = (await all(client.pages(q({ level: "campaign", granularity: "total" }), {}))).rows;
  expect(campaign).toEqual([{
    date: null, campaign_id: "900", campaign_name: "Spring", ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null,
    impressions: 1830, clicks: 41, spend_micros: "13630000", conversions: 6,
  }]);
  const ads = (await all(client.pages(q({ level: "ad", granularity: "total" }), {}))).rows;
  expect(ads.map((r) => [r.date, r.campaign_id, r.ad_group_id, r.ad_id, r.ad_name, r.spend_micros, r.conversions])).toEqual([
    [null, "900", "910", "911", "Shoe A", "13330000", 2],
    [null, "900", "920", "921", "Shoe B", "100000", 1],
    [null, "900", "920", "922", "Shoe C", "200000", 3],
  ]);
  const levels = insightCalls().map((r) => [r.query.level, r.query.time_increment]);
  expect(levels).toEqual([["campaign", "all_days"], ["ad", "all_days"]]);
});

test("pages through Meta's cursors one page per pull (backpressure), every seeded row once", async () => {
  seedAccounts();
  // 40 ad sets x 30 days = 1,200 daily rows: three pages of 500.
  const seeded: MetaStatsRow[] = [];
  let cents = 0n;
  for (let s = 0; s < 40; s++) {
    for (let d = 1; d <= 30; d++) {
      const spend = `${s}.${String((s * 7 + d) % 100).padStart(2, "0")}`;
      cents += BigInt(spend.replace(".", ""));
      seeded.push({ accountId: ACCOUNT, date: `2026-09-${String(d).padStart(2, "0")}`, campaignId: "800", adsetId: String(5000 + s), adsetName: `Set ${s}`, adId: String(6000 + s), impressions: 100 + s, clicks: d, spend });
    }
  }
  server.addStats(...seeded);
  const it = reporting().pages(q({ from: "2026-09-01", to: "2026-09-30" }), {})[Symbol.asyncIterator]();
  const sizes: number[] = [];
  const callsAfter: number[] = [];
  const rows: ReportRow[] = [];
  for (let r = await it.next(); !r.done; r = await it.next()) {
    sizes.push(r.value.length);
    rows.push(...r.value);
    callsAfter.push(insightCalls().length);
  }
  expect(sizes).toEqual([500, 500, 200]);
  // Each page was fetched only when asked for.
  expect(callsAfter).toEqual([1, 2, 3]);
  const calls = insightCalls();
  expect(calls.map((c) => c.query.limit)).toEqual(["500", "500", "500"]);
  expect(calls[0].query.after).toBeUndefined();
  expect(calls[1].query.after).toBeTruthy();
  expect(calls.every((c) => c.auth === "header")).toBe(true); // cursors, not Graph's token-bearing `next` links
  expect(new Set(rows.map((r) => `${r.date}/${r.ad_group_id}`)).size).toBe(1200);
  expect(rows.reduce((s, r) => s + BigInt(r.spend_micros), 0n)).toBe(cents * 10_000n);
  expect(rows.reduce((s, r) => s + r.impressions, 0)).toBe(seeded.reduce((s, r) => s + Number(r.impressions), 0));
});

test("adGroupIds filters at Meta: only those ad sets, and campaign rows add up only them", async () => {
  seedAccounts();
  seedShop();
  const client = reporting();
  const sets = (await all(client.pages(q({ adGroupIds: ["920"] }), {}))).rows;
  expect(sets.map((r) => [r.date, r.ad_group_id, r.spend_micros])).toEqual([["2026-11-02", "920", "300000"]]);
  const campaign = (await all(client.pages(q({ level: "campaign", granularity: "total", adGroupIds: ["920"] }), {}))).rows;
  expect(campaign.map((r) => [r.campaign_id, r.impressions, r.spend_micros, r.conversions])).toEqual([["900", 750, "300000", 4]]);
  expect(JSON.parse(insightCalls()[0].query.filtering)).toEqual([{ field: "adset.id", operator: "IN", value: ["920"] }]);
  // An empty list means no ad sets: nothing is asked of Meta.
  server.resetLog();
  expect((await all(client.pages(q({ adGroupIds: [] }), {}))).rows).toEqual([]);
  expect(insightCalls()).toHaveLength(0);
  await expect(fail(all(client.pages(q({ adGroupIds: ["9 OR 1"] }), {})))).resolves.toMatchObject({ kind: "bad_request" });
});

test("throttles, expired tokens and out-of-range dates become the framework's kinds", async () => {
  seedAccounts();
  seedShop();
  const client = reporting();
  server.failNext("ad_account_limit", 1, { regainMinutes: 3 });
  const acc = await fail(all(client.pages(q(), {})));
  expect(acc).toBeInstanceOf(ProviderError);
  expect(acc).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 180_000, providerCode: "613/1487742" } });
  server.failNext("insights_limit", 1, { regainMinutes: 1 });
  await expect(fail(all(client.pages(q(), {})))).resolves.toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 60_000, providerCode: "80000/2446079" } });
  server.failNext("transient", 1);
  await expect(fail(all(client.pages(q(), {})))).resolves.toMatchObject({ kind: "unavailable", retryable: true });
  // Meta keeps 37 months of insights: an older start is its #3018, a bad request.
  await expect(fail(all(client.pages(q({ from: "2020-01-01", to: "2020-01-02" }), {})))).resolves.toMatchObject({ kind: "bad_request", detail: { providerCode: "3018" } });
  server.expireToken(TOKEN);
  await expect(fail(client.account(ACCOUNT))).resolves.toMatchObject({ kind: "unauthorized", detail: { providerCode: `190/${META_SUBCODES.tokenExpired}` } });
  await expect(fail(all(client.pages(q(), {})))).resolves.toMatchObject({ kind: "unauthorized" });
});

test("an aborted signal stops fetching: no further page is asked for", async () => {
  seedAccounts();
  for (let d = 1; d <= 20; d++) for (let s = 0; s < 60; s++) {
    server.addStats({ accountId: ACCOUNT, date: `2026-10-${String(d).padStart(2, "0")}`, campaignId: "1", adsetId: String(100 + s), adId: String(200 + s), impressions: 1, clicks: 0, spend: "0.01" });
  }
  const ac = new AbortController();
  const it = reporting().pages(q({ from: "2026-10-01", to: "2026-10-20" }), { signal: ac.signal })[Symbol.asyncIterator]();
  expect((await it.next()).value).toHaveLength(500);
  ac.abort();
  await expect(it.next()).rejects.toMatchObject({ name: "AbortError" });
  await new Promise((r) => setTimeout(r, 50));
  expect(insightCalls()).toHaveLength(1);
});

describe("async report runs", () => {
  test("large queries go async by rule; sync stays for previews", () => {
    expect(usesAsync(q({ level: "ad", from: "2026-11-01", to: "2026-11-30" }))).toBe(true);
    expect(usesAsync(q({ level: "ad_group", from: "2026-08-01", to: "2026-11-30" }))).toBe(true);
    expect(usesAsync(q({ level: "ad_group", from: "2026-11-01", to: "2026-11-30" }))).toBe(false);
    expect(usesAsync(q({ level: "ad", granularity: "total", from: "2026-01-01", to: "2026-11-30" }))).toBe(false);
  });

  test("submit, poll until Job Completed at 100 %, then page the run's results by cursor", async () => {
    seedAccounts();
    seedShop();
    for (let d = 1; d <= 30; d++) for (let a = 0; a < 25; a++) {
      server.addStats({ accountId: ACCOUNT, date: `2026-09-${String(d).padStart(2, "0")}`, campaignId: "300", campaignName: "Fall", adsetId: "310", adsetName: "All", adId: String(4000 + a), adName: `Ad ${a}`, impressions: 10, clicks: 1, spend: "0.05",
        actions: [{ action_type: "offsite_conversion.fb_pixel_purchase", value: "1" }] });
    }
    server.setReportRunSteps(4);
    const it = fastClient().pages(q({ level: "ad", from: "2026-09-01", to: "2026-11-03" }), {})[Symbol.asyncIterator]();
    const first = await it.next();
    const [run] = server.reportRuns;
    expect(run).toMatchObject({ status: "Job Completed", percent: 100, polls: 4, downloads: 1 });
    const rows = [...first.value as ReportRow[]];
    for (let r = await it.next(); !r.done; r = await it.next()) rows.push(...r.value);
    // 750 ad-days in September plus the shop's 5 ad-days (31 October to 3 November).
    expect(rows).toHaveLength(750 + 5);
    expect(run.downloads).toBe(2);
    const fall = rows.filter((r) => r.campaign_id === "300");
    expect(fall.every((r) => r.spend_micros === "50000" && r.conversions === 1 && r.ad_group_id === "310" && r.ad_id !== null)).toBe(true);
    const shoeA = rows.find((r) => r.ad_id === "911" && r.date === "2026-11-01");
    expect(shoeA).toMatchObject({ impressions: 1000, clicks: 31, spend_micros: "12340000", conversions: 2, ad_name: "Shoe A" });
    // The lifecycle as Meta saw it: one POST with the query, status reads, result pages (no sync GET).
    const calls = insightCalls().map((r) => `${r.method} ${r.path.replace(run.id, "<run>")}`);
    expect(calls).toEqual([
      `POST /v27.0/act_${ACCOUNT}/insights`, "GET /v27.0/<run>", "GET /v27.0/<run>", "GET /v27.0/<run>", "GET /v27.0/<run>",
      "GET /v27.0/<run>/insights", "GET /v27.0/<run>/insights",
    ]);
    expect(run.params).toMatchObject({ level: "ad", time_increment: "1", time_range: { since: "2026-09-01", until: "2026-11-03" } });
  });

  test("Meta's data-size error on a sync call falls back to an async run", async () => {
    seedAccounts();
    seedShop();
    server.setSyncInsightsLimit(2);
    server.setReportRunSteps(2);
    const { rows } = await all(fastClient().pages(q(), {}));
    expect(rows.map((r) => [r.date, r.ad_group_id, r.spend_micros])).toEqual([["2026-11-01", "910", "12340000"], ["2026-11-02", "920", "300000"], ["2026-11-03", "910", "990000"]]);
    const sync = server.requests.find((r) => r.method === "GET" && r.path.endsWith(`act_${ACCOUNT}/insights`));
    expect(sync?.status).toBe(400);
    expect(server.reportRuns).toHaveLength(1);
    expect(server.reportRuns[0].status).toBe("Job Completed");
  });

  test("Job Failed and Job Skipped are failures, not waited on", async () => {
    seedAccounts();
    seedShop();
    server.setReportRunSteps(2);
    server.failNextReportRun("Job Failed");
    const failed = await fail(all(fastClient().pages(q({ level: "ad", from: "2026-10-01", to: "2026-11-03" }), {})));
    expect(failed).toMatchObject({ kind: "unavailable", detail: { providerCode: "job_failed" } });
    server.failNextReportRun("Job Skipped");
    const skipped = await fail(all(fastClient().pages(q({ level: "ad", from: "2026-10-01", to: "2026-11-03" }), {})));
    expect(skipped).toMatchObject({ kind: "unavailable", detail: { providerCode: "job_skipped" } });
    expect(server.reportRuns.map((r) => [r.status, r.polls, r.downloads])).toEqual([["Job Failed", 2, 0], ["Job Skipped", 2, 0]]);
  });

  test("a run that outlasts the wait bound fails instead of polling for ever", async () => {
    seedAccounts();
    seedShop();
    server.setReportRunSteps(1000);
    const client = new MetaAdsReportingClient({ baseUrl: server.url, accessToken: TOKEN }, { pollFirstMs: 5, pollMaxMs: 10, maxWaitMs: 100 });
    const err = await fail(all(client.pages(q({ level: "ad", from: "2026-10-01", to: "2026-11-03" }), {})));
    expect(err).toMatchObject({ kind: "unavailable", detail: { providerCode: "job_timeout" } });
    expect(server.reportRuns[0].polls).toBeLessThan(30);
  });

  test("an abort while polling abandons the run: no further status reads or downloads", async () => {
    seedAccounts();
    seedShop();
    server.setReportRunSteps(1000);
    const ac = new AbortController();
    const client = new MetaAdsReportingClient({ baseUrl: server.url, accessToken: TOKEN }, { pollFirstMs: 10, pollMaxMs: 10 });
    const done = all(client.pages(q({ level: "ad", from: "2026-10-01", to: "2026-11-03" }), { signal: ac.signal }));
    while ((server.reportRuns[0]?.polls ?? 0) < 2) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await expect(done).rejects.toMatchObject({ name: "AbortError" });
    const polls = server.reportRuns[0].polls;
    await new Promise((r) => setTimeout(r, 80));
    expect(server.reportRuns[0].polls).toBe(polls);
    expect(server.reportRuns[0].downloads).toBe(0);
  });
});

test("decimalToMicros is exact: no float, rounding only past the sixth decimal", () => {
  expect(decimalToMicros("0.1")).toBe("100000");
  expect(decimalToMicros("12.34")).toBe("12340000");
  expect(decimalToMicros("1500")).toBe("1500000000");
  expect(decimalToMicros("92233720368.547758")).toBe("92233720368547758");
  expect(decimalToMicros("0.0000005")).toBe("1");
  expect(decimalToMicros("0")).toBe("0");
  expect(() => decimalToMicros("1e3")).toThrow(ProviderError);
  expect(CONVERSION_ACTION_TYPES).toContain("offsite_conversion.fb_pixel_purchase");
});
