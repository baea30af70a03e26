import http from "node:http";
import { pollReport, ProviderError, ProviderHttp, PROVIDER_USER_AGENT, waitFromRules } from "@trendgate/connector-core";
import { bodyServer, listenLocal } from "../peers/listen.ts";
import { providerError } from "../helpers/provider.ts";

// The one HTTP path every provider's API, token and report calls take: the outbound guard refuses private addresses
// unless OUTBOUND_ALLOWLIST names them, an answer over the size cap is refused, and the wait a provider asks for is
// read from its manifest's rate-limit headers by one reader (Retry-After as seconds or an HTTP date).

const ALLOW = { OUTBOUND_ALLOWLIST: "127.0.0.1" };
const NONE = { OUTBOUND_ALLOWLIST: "" };

let server: http.Server;
let base: string;
const seen: http.IncomingHttpHeaders[] = [];
let answer: (res: http.ServerResponse) => void = (res) => res.end("{}");

beforeAll(async () => {
  server = bodyServer((req, res) => { seen.push(req.headers); answer(res); });
  base = await listenLocal(server);
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => { seen.length = 0; answer = (res) => res.end("{}"); });

const path = new ProviderHttp("acme_ads");

test("a provider base URL on a private address is refused without the allow-list, and reached with it", async () => {
  const refused = await providerError(() => path.fetch("campaigns", `${base}/v1/campaigns`, { method: "GET", env: NONE }));
  expect([refused.provider, refused.kind, refused.detail.providerCode, refused.retryable]).toEqual(["acme_ads", "bad_request", "ERR_BLOCKED_DESTINATION", false]);
  expect(refused.message).toMatch(/campaigns: request refused .*loopback.*OUTBOUND_ALLOWLIST/);
  // An address in a private range is refused before any connection is tried.
  const metadata = await providerError(() => path.fetch("token", "http://169.254.169.254/latest/meta-data", { method: "GET", env: NONE }));
  expect(metadata.detail.providerCode).toBe("ERR_BLOCKED_DESTINATION");
  expect(seen).toHaveLength(0);

  answer = (res) => { res.setHeader("content-type", "application/json"); res.end('{"data":[1,2]}'); };
  const ok = await path.fetch("campaigns", `${base}/v1/campaigns`, { method: "GET", env: ALLOW });
  expect([ok.status, ok.body]).toEqual([200, { data: [1, 2] }]);
  expect(seen[0]["user-agent"]).toBe(PROVIDER_USER_AGENT);
});

test("an answer over the size cap is refused as unavailable, not handed to the connector cut short", async () => {
  answer = (res) => res.end(JSON.stringify({ rows: "x".repeat(4096) }));
  const e = await providerError(() => path.fetch("report page", `${base}/v1/report`, { method: "GET", env: ALLOW, maxResponseBytes: 1024 }));
  expect([e.kind, e.detail.status, e.detail.providerCode]).toEqual(["unavailable", 200, "response_too_large"]);
  expect(e.message).toMatch(/report page: the answer is larger than 1024 bytes/);
});

test("limits come from the configuration (CONNECTOR_RESPONSE_MAX_BYTES, OUTBOUND_TIMEOUT_MS), unless the provider declares what it needs", async () => {
  answer = (res) => res.end(JSON.stringify({ rows: "x".repeat(4096) }));
  const small = { ...ALLOW, CONNECTOR_RESPONSE_MAX_BYTES: "2048" };
  const capped = await providerError(() => new ProviderHttp("teams").fetch("conversation", `${base}/v3/conversations`, { method: "GET", env: small }));
  expect([capped.detail.providerCode, capped.message]).toEqual(["response_too_large", "teams: conversation: the answer is larger than 2048 bytes"]);
  // An ads API's report pages are larger than that: its provider says so, and the configured cap does not apply to it.
  const reports = new ProviderHttp("acme_ads", undefined, { maxResponseBytes: 32 * 1024 * 1024 });
  expect((await reports.fetch("report page", `${base}/v1/report`, { method: "GET", env: small })).body.rows).toHaveLength(4096);

  answer = (res) => setTimeout(() => res.end("{}"), 600);
  const slow = await providerError(() => new ProviderHttp("teams").fetch("conversation", `${base}/v3/conversations`, { method: "GET", env: { ...ALLOW, OUTBOUND_TIMEOUT_MS: "200" } }));
  expect([slow.kind, slow.message]).toEqual(["unavailable", "teams: conversation: request failed (timeout)"]);
  expect((await new ProviderHttp("teams").fetch("conversation", `${base}/v3/conversations`, { method: "GET", env: ALLOW })).status).toBe(200);
});

test("no answer is unavailable with the reason; the caller's own abort stays an abort", async () => {
  answer = () => undefined; // never answers
  const slow = await providerError(() => path.fetch("insights", `${base}/v1/insights`, { method: "GET", env: ALLOW, timeoutMs: 200 }));
  expect([slow.kind, slow.detail.status, slow.message]).toEqual(["unavailable", null, "acme_ads: insights: request failed (timeout)"]);

  const stop = new AbortController();
  const pending = path.fetch("insights", `${base}/v1/insights`, { method: "GET", env: ALLOW, signal: stop.signal });
  setTimeout(() => stop.abort(), 50);
  const err = await pending.catch((e) => e);
  expect(err).not.toBeInstanceOf(ProviderError);
  expect((err as Error).name).toBe("AbortError");
});

test("Retry-After is read in one place: delta seconds and an HTTP date, on the answer the connector gets", async () => {
  answer = (res) => { res.statusCode = 429; res.setHeader("retry-after", "7"); res.end("{}"); };
  expect((await path.fetch("campaigns", `${base}/v1/campaigns`, { method: "GET", env: ALLOW })).waitMs).toBe(7000);

  const at = new Date(Date.now() + 30_000).toUTCString();
  answer = (res) => { res.statusCode = 429; res.setHeader("retry-after", at); res.end("{}"); };
  const dated = (await path.fetch("campaigns", `${base}/v1/campaigns`, { method: "GET", env: ALLOW })).waitMs!;
  expect(dated).toBeGreaterThan(27_000);
  expect(dated).toBeLessThanOrEqual(31_000);

  answer = (res) => { res.statusCode = 429; res.end("{}"); };
  expect((await path.fetch("campaigns", `${base}/v1/campaigns`, { method: "GET", env: ALLOW })).waitMs).toBeUndefined();
});

test("a manifest's rate-limit rules decide which headers say how long: a reset in seconds, or as an epoch", () => {
  const headers = (h: Record<string, string>) => (name: string) => h[name];
  const now = Date.UTC(2026, 10, 26);
  expect(waitFromRules({ resetHeader: "x-ratelimit-reset", resetUnit: "seconds" }, headers({ "x-ratelimit-reset": "12" }), now)).toBe(12_000);
  expect(waitFromRules({ resetHeader: "x-rate-limit-reset", resetUnit: "epoch_seconds" }, headers({ "x-rate-limit-reset": String(now / 1000 + 90) }), now)).toBe(90_000);
  // Retry-After first where both are declared; a header the rules do not name is not read.
  const both = { retryAfterHeader: "retry-after", resetHeader: "x-ratelimit-reset" };
  expect(waitFromRules(both, headers({ "retry-after": "3", "x-ratelimit-reset": "60" }), now)).toBe(3000);
  expect(waitFromRules({ resetHeader: "x-ratelimit-reset", resetUnit: "seconds" }, headers({ "retry-after": "3" }), now)).toBeUndefined();
  expect(waitFromRules(undefined, headers({ "retry-after": "soon" }), now)).toBeUndefined();
});

test("the shared report poller: waits longer each time until ready, retries a throttled poll as asked, never a failed job", async () => {
  const times: number[] = [];
  const start = Date.now();
  const answers = [{ pending: "RUNNING" }, { pending: "RUNNING" }, { ready: "https://files.example/r.csv" }];
  const url = await pollReport(async () => { times.push(Date.now() - start); return answers.shift()!; }, { firstMs: 20, maxMs: 1000, budgetMs: 5000 }, () => new Error("late"));
  expect(url).toBe("https://files.example/r.csv");
  // Waits of 20, 40 and 80 ms: each poll comes later than the one before by more.
  expect(times[1] - times[0]).toBeGreaterThanOrEqual(35);
  expect(times[2] - times[1]).toBeGreaterThanOrEqual(75);

  let polls = 0;
  const throttled = new ProviderError("acme_ads", "rate_limited", "poll: slow down", { retryAfterMs: 10 });
  const afterThrottle = await pollReport(async () => (++polls === 1 ? Promise.reject(throttled) : { ready: polls }), { firstMs: 0, maxMs: 100, budgetMs: 5000, retries: 1 }, () => new Error("late"));
  expect(afterThrottle).toBe(2);

  polls = 0;
  const failed = new ProviderError("acme_ads", "unavailable", "report failed at the provider");
  await expect(pollReport(async () => { polls++; return { failed }; }, { firstMs: 0, maxMs: 100, budgetMs: 5000, retries: 3 }, () => new Error("late"))).rejects.toBe(failed);
  expect(polls).toBe(1);

  const late = await pollReport(async () => ({ pending: "QUEUED" }), { firstMs: 10, maxMs: 40, budgetMs: 100 }, (ms, last) => new Error(`still ${last} after ${ms} ms`)).catch((e) => e);
  expect((late as Error).message).toMatch(/^still QUEUED after \d+ ms$/);
});

test("a report file comes through the same guard, and a file over its cap ends its stream as unavailable", async () => {
  const refused = await providerError(() => path.download("report download", `${base}/files/r.csv`, { env: NONE }));
  expect([refused.kind, refused.detail.providerCode]).toEqual(["bad_request", "ERR_BLOCKED_DESTINATION"]);
  expect(seen).toHaveLength(0);

  answer = (res) => res.end("a,b\n1,2\n");
  const small = await path.download("report download", `${base}/files/r.csv`, { env: ALLOW });
  expect([small.status, await new Response(small.body).text()]).toEqual([200, "a,b\n1,2\n"]);
  expect(seen[0].authorization).toBeUndefined();

  answer = (res) => res.end("x".repeat(64 * 1024));
  const big = await path.download("report download", `${base}/files/big.csv`, { env: ALLOW, maxBytes: 1024 });
  const err = await new Response(big.body).text().catch((e) => e);
  expect(err).toBeInstanceOf(ProviderError);
  expect([(err as ProviderError).kind, (err as ProviderError).detail.providerCode]).toEqual(["unavailable", "response_too_large"]);
});
