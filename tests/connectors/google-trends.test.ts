import { OutboundClient, OutboundGuard } from "@trendgate/delivery";
import { ProviderError, type ProviderContext } from "../../packages/connectors/social/src/types.ts";
import { GoogleTrendsClient } from "../../packages/connectors/social/src/google-trends/client.ts";
import { startTrendsServer, type FixturePoint, type TrendsServer } from "../peers/google-trends-server.ts";

const TOKEN = "ya29.test-access-token";
const outbound = new OutboundClient({ guard: new OutboundGuard(["127.0.0.1"]), connectTimeoutMs: 1000, timeoutMs: 3000, maxResponseBytes: 5 * 1024 * 1024, userAgent: "trendgate-test" });
const context = (baseUrl: string): ProviderContext => ({ baseUrl, request: (m, u, i) => outbound.request(m, u, i) });
const POLL = { pollIntervalMs: 10, maxWaitMs: 2000 };
const NOW = new Date("2025-06-20T00:00:00Z");

let gt: TrendsServer;
let trends: GoogleTrendsClient;
beforeAll(async () => { gt = await startTrendsServer({ token: TOKEN }); trends = new GoogleTrendsClient(context(gt.baseUrl), { now: () => NOW }); });
afterAll(async () => { await gt.close(); });
beforeEach(() => gt.reset());

const DAY = 86_400_000;
/** Daily points from 1 April to 18 June 2025 (complete), then 19 June as the partial day; value(day) gives each. */
function daily(value: (iso: string) => number, partial: number): FixturePoint[] {
  const points: FixturePoint[] = [];
  for (let t = Date.parse("2025-04-01T00:00:00Z"); t <= Date.parse("2025-06-18T00:00:00Z"); t += DAY) {
    const iso = new Date(t).toISOString();
    points.push({ time: iso, searchInterest: value(iso.slice(0, 10)) });
  }
  points.push({ time: "2025-06-19T00:00:00.000Z", searchInterest: partial, isPartial: true });
  return points;
}
/** With recentDays 7 and baselineDays 28 the windows end at the newest complete day, 18 June. */
const RECENT_FROM = "2025-06-12", BASELINE_FROM = "2025-05-15";
const shaped = (before: number, baseline: number, recent: number, partial: number) =>
  daily((d) => (d >= RECENT_FROM ? recent : d >= BASELINE_FROM ? baseline : before), partial);

async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  try { await p; } catch (e) { if (e instanceof ProviderError) return e; throw e; }
  throw new Error("expected a ProviderError");
}

describe("fetchTimeSeries", () => {
  test("starts the operation, polls it until done, and drops the partial point unless asked", async () => {
    gt.setSeries("solar kite", [
      { time: "2025-05-05T00:00:00Z", searchInterest: 12 },
      { time: "2025-05-12T00:00:00Z", searchInterest: 30 },
      { time: "2025-05-19T00:00:00Z", searchInterest: 44, isPartial: true },
      { time: "2025-07-01T00:00:00Z", searchInterest: 99 }, // outside the range asked for
    ]);
    gt.setPollsUntilDone(3);
    const q = { term: "solar kite", geo: { type: "COUNTRY", code: "US" }, start: new Date("2025-05-01T00:00:00Z"), end: new Date("2025-05-25T00:00:00Z"), resolution: "WEEK" as const };
    const points = await trends.fetchTimeSeries(q, TOKEN, POLL);
    expect(points).toEqual([
      { time: new Date("2025-05-05T00:00:00Z"), searchInterest: 12, scaledSearchInterest: 27, isPartial: false },
      { time: new Date("2025-05-12T00:00:00Z"), searchInterest: 30, scaledSearchInterest: 68, isPartial: false },
    ]);

    const [start] = gt.on("POST", "/v1alpha:fetchTimeSeries");
    expect(start.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(start.body).toEqual({ spec: {
      expression: { terms: [{ value: "solar kite", type: "BROAD" }] },
      geo: { type: "COUNTRY", code: "US" },
      timeRange: { startTime: "2025-05-01T00:00:00.000Z", endTime: "2025-05-25T00:00:00.000Z" },
      timeResolution: "WEEK",
    } });
    const polls = gt.on("GET", "/v1alpha/operations/");
    expect(polls).toHaveLength(3);
    expect(new Set(polls.map((p) => p.path)).size).toBe(1);

    const withPartial = await trends.fetchTimeSeries(q, TOKEN, { ...POLL, includePartial: true });
    expect(withPartial.map((p) => [p.searchInterest, p.isPartial])).toEqual([[12, false], [30, false], [44, true]]);
  });

  test("an operation that is not done within maxWaitMs is unavailable, and can be resumed by name", async () => {
    gt.setSeries("slow", [{ time: "2025-05-05T00:00:00Z", searchInterest: 5 }]);
    gt.setPollsUntilDone(1_000);
    const q = { term: "slow", start: new Date("2025-05-01T00:00:00Z"), end: new Date("2025-05-25T00:00:00Z"), resolution: "WEEK" as const };
    const started = Date.now();
    const e = await rejection(trends.fetchTimeSeries(q, TOKEN, { pollIntervalMs: 20, maxWaitMs: 150 }));
    expect(e).toMatchObject({ kind: "unavailable", detail: { providerCode: "OPERATION_PENDING" } });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(gt.on("GET", "/v1alpha/operations/").length).toBeGreaterThanOrEqual(3);

    const name = gt.on("GET", "/v1alpha/operations/")[0].path.slice("/v1alpha/".length);
    expect(e.message).toContain(name);
    gt.setPollsUntilDone(1);
    await expect(trends.pollOperation(name, TOKEN, POLL)).resolves.toEqual({ points: [expect.objectContaining({ searchInterest: 5 })] });
  });

  test("an operation that finishes with an error is reported by its gRPC code", async () => {
    gt.failNext(1, "operationInvalidArgument"); // the first poll finds the operation failed
    const e = await rejection(trends.fetchTimeSeries({ term: "x", start: new Date("2025-05-01"), end: new Date("2025-05-25"), resolution: "WEEK" }, TOKEN, POLL));
    expect(e).toMatchObject({ kind: "bad_request", detail: { providerCode: "INVALID_ARGUMENT" } });
    expect(e.message).toContain("Term is too long");
  });
});

describe("validateMomentum", () => {
  const rule = { recentDays: 7, baselineDays: 28 };

  test("confirmed: the last week's interest is twice the four weeks before (older days ignored)", async () => {
    gt.setSeries("solar kite", shaped(1_000, 20, 40, 1));
    const r = await trends.validateMomentum({ term: "solar kite", ...rule }, TOKEN, POLL);
    expect(r).toMatchObject({ verdict: "confirmed", ratio: 2, recentMean: 40, baselineMean: 20 });
    expect(r.points).toHaveLength(35);
    expect(r.points[0].time).toEqual(new Date(`${BASELINE_FROM}T00:00:00Z`));
    expect(r.points.at(-1)!.time).toEqual(new Date("2025-06-18T00:00:00Z"));

    // Asked for the windows plus Trends' reporting lag: 7 + 28 + 3 days back from now, by day.
    const spec = gt.on("POST", "/v1alpha:fetchTimeSeries")[0].body.spec;
    expect(spec.timeRange).toEqual({ startTime: "2025-05-13T00:00:00.000Z", endTime: NOW.toISOString() });
    expect(spec.timeResolution).toBe("DAY");
  });

  test("refuted: flat interest, even with a spike on the unfinished day (partial points are not used)", async () => {
    gt.setSeries("fad", shaped(50, 50, 50, 5_000));
    const r = await trends.validateMomentum({ term: "fad", ...rule }, TOKEN, POLL);
    expect(r).toMatchObject({ verdict: "refuted", ratio: 1, recentMean: 50, baselineMean: 50 });
    expect(r.points.some((p) => p.isPartial)).toBe(false);
  });

  test("refuted: falling interest", async () => {
    gt.setSeries("fading", shaped(80, 80, 40, 40));
    expect(await trends.validateMomentum({ term: "fading", ...rule }, TOKEN, POLL)).toMatchObject({ verdict: "refuted", ratio: 0.5 });
  });

  test("inconclusive: growth between 1.1x and 1.5x", async () => {
    gt.setSeries("maybe", shaped(10, 10, 13, 13));
    const r = await trends.validateMomentum({ term: "maybe", ...rule }, TOKEN, POLL);
    expect(r.verdict).toBe("inconclusive");
    expect(r.ratio).toBeCloseTo(1.3);
  });

  test("inconclusive: too few points, however steep the rise", async () => {
    gt.setSeries("sparse", [
      { time: "2025-06-01T00:00:00Z", searchInterest: 1 },
      { time: "2025-06-02T00:00:00Z", searchInterest: 1 },
      { time: "2025-06-16T00:00:00Z", searchInterest: 90 },
      { time: "2025-06-17T00:00:00Z", searchInterest: 95 },
      { time: "2025-06-18T00:00:00Z", searchInterest: 99 },
    ]);
    const r = await trends.validateMomentum({ term: "sparse", ...rule }, TOKEN, POLL);
    expect(r).toMatchObject({ verdict: "inconclusive", ratio: null });
    expect(r.reason).toContain("too few");
  });

  test("the thresholds are the caller's to set", async () => {
    gt.setSeries("maybe", shaped(10, 10, 13, 13));
    const r = await trends.validateMomentum({ term: "maybe", ...rule, confirmRatio: 1.25 }, TOKEN, POLL);
    expect(r.verdict).toBe("confirmed");
  });
});

describe("errors", () => {
  const q = { term: "x", start: new Date("2025-05-01T00:00:00Z"), end: new Date("2025-05-25T00:00:00Z"), resolution: "WEEK" as const };

  test("a wrong or expired token is unauthorized (401), as is a project outside the alpha (403)", async () => {
    const e = await rejection(trends.fetchTimeSeries(q, "ya29.expired", POLL));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 401, providerCode: "UNAUTHENTICATED" } });
    expect(gt.requests[0].headers.authorization).toBe("Bearer ya29.expired");
    gt.failNext(1, "permissionDenied");
    expect(await rejection(trends.fetchTimeSeries(q, TOKEN, POLL))).toMatchObject({ kind: "unauthorized", detail: { status: 403 } });
  });

  test("429 is rate_limited: Retry-After first, then a RetryInfo detail, then the default", async () => {
    gt.failNext(1, "resourceExhausted", { headers: { "retry-after": "12" } });
    expect(await rejection(trends.fetchTimeSeries(q, TOKEN, POLL))).toMatchObject({ kind: "rate_limited", detail: { status: 429, providerCode: "RESOURCE_EXHAUSTED", retryAfterMs: 12_000 } });
    gt.failNext(1, "resourceExhausted", { details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "30s" }] });
    expect(await rejection(trends.fetchTimeSeries(q, TOKEN, POLL))).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 30_000 } });
    gt.failNext(1, "resourceExhausted");
    expect(await rejection(trends.fetchTimeSeries(q, TOKEN, POLL))).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 60_000 } });
  });

  test("a failure while polling surfaces too, and 503 is unavailable", async () => {
    gt.setPollsUntilDone(5);
    gt.failNext(1, "unavailable"); // the POST
    expect(await rejection(trends.fetchTimeSeries(q, TOKEN, POLL))).toMatchObject({ kind: "unavailable", detail: { status: 503 } });
    gt.requests.length = 0;
    gt.failNext(1, "resourceExhausted", { on: "poll", headers: { "retry-after": "3" } });
    expect(await rejection(trends.fetchTimeSeries(q, TOKEN, POLL))).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 3_000 } });
    expect(gt.requests.map((r) => r.method)).toEqual(["POST", "GET"]);
  });
});
