import type { AddressInfo } from "node:net";
import { createLogger } from "@trendgate/logger";
import { startWorkers, type RunningWorkers } from "../../apps/worker/src/run-workers.ts";
import { catalogProblemsOf } from "../helpers/account-events.ts";
import { waitFor } from "../helpers/config.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { newId } from "@trendgate/db";
import { googleConnected } from "../ads/kit.ts";

// Ads reporting through the gateway against the local Google Ads API: the catalog; a preview whose rows
// are the provider's numbers normalised (micros, the account's currency and time zone), paged by cursor, with
// providers that cannot take part reported per provider; the filter on ad groups a plan changed; a small export in
// the response; a large one as a job (progress, download, totals equal to the provider's); cancelling.

const BASE = "/api/integrations/ads/reporting";
let google: GoogleAdsServer;
let gw: TestGateway;
let workers: RunningWorkers;

beforeAll(async () => {
  google = await startGoogleAdsServer({ pageSize: 500 });
  gw = await startGateway({ OUTBOUND_ALLOWLIST: "127.0.0.1", GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url, REPORT_STREAM_MAX_ROWS: "100", REPORT_PREVIEW_MAX_ROWS: "50", REPORT_EXPORT_CHUNK_BYTES: "16384" });
  workers = startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["report-exports"]);
});
afterAll(async () => { await workers.close(); await gw.close(); await google.close(); });

async function account(opts: { currency?: string; timeZone?: string } = {}) {
  const a = await googleConnected(gw, google);
  a.customer.currencyCode = opts.currency ?? "EUR";
  a.customer.timeZone = opts.timeZone ?? "Europe/Berlin";
  await gw.http.put("/api/integrations/ads/google_ads/selection").set(a.auth).send({ trend_category: "tech", account_id: a.customer.id });
  return a;
}
const sumSpend = (rows: { spend_micros: string }[]) => rows.reduce((s, r) => s + BigInt(r.spend_micros), 0n).toString();

test("the catalog: common dimensions and metrics, and per provider its reporting limits and definitions", async () => {
  const a = await account();
  const res = await gw.http.get(`${BASE}/catalog`).set(a.auth);
  expect(res.status).toBe(200);
  expect(res.body.metrics.map((m: { name: string }) => m.name)).toEqual(["impressions", "clicks", "spend_micros", "conversions", "ctr", "cpc_micros"]);
  const g = res.body.providers.find((p: { provider: string }) => p.provider === "google_ads");
  expect(g).toMatchObject({ connected: true, reporting: true, levels: expect.arrayContaining(["campaign", "ad_group"]), granularities: expect.arrayContaining(["day"]) });
  expect(res.body.providers).toHaveLength(7);
  expect(res.body.limits).toMatchObject({ stream_max_rows: 100, preview_max_rows: 50 });
});

test("preview: the provider's numbers normalised and marked by source, paged by cursor; an unconnected provider is reported, not fatal", async () => {
  const a = await account({ currency: "JPY", timeZone: "Asia/Tokyo" });
  const gen = google.generateStats({ customerId: a.customer.id, adGroups: 3, days: 4, from: "2026-11-01" });
  const body = { providers: ["google_ads", "meta_ads"], from: gen.from, to: gen.to, granularity: "day", level: "ad_group" };
  const seen: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: { data: Record<string, unknown>[]; next_cursor: string | null; providers: unknown[] } } = await gw.http.post(`${BASE}/preview`).query({ limit: 5, ...(cursor ? { cursor } : {}) }).set(a.auth).send(body);
    expect(res.status).toBe(200);
    seen.push(...res.body.data);
    cursor = res.body.next_cursor;
    if (!pages++) {
      expect(res.body.providers).toEqual(expect.arrayContaining([
        expect.objectContaining({ provider: "meta_ads", status: "failed", error: expect.objectContaining({ kind: "not_connected" }) }),
        expect.objectContaining({ provider: "google_ads", account_id: a.customer.id, currency: "JPY", time_zone: "Asia/Tokyo" }),
      ]));
    }
  } while (cursor && pages < 10);
  const expected = gen.expected({ level: "ad_group", granularity: "day" });
  expect(seen).toHaveLength(expected.rows);
  expect(new Set(seen.map((r) => `${r.ad_group_id}|${r.date}`)).size).toBe(expected.rows); // no row twice across pages
  expect(sumSpend(seen as { spend_micros: string }[])).toBe(expected.costMicros);
  expect(seen.reduce((s, r) => s + (r.impressions as number), 0)).toBe(expected.impressions);
  for (const r of seen) {
    expect(r).toMatchObject({ provider: "google_ads", account_id: a.customer.id, currency: "JPY" });
    expect(r.date).toMatch(/^2026-11-0[1-4]$/);
    expect(r.ctr).toBe(Math.round(((r.clicks as number) / (r.impressions as number)) * 1e6) / 1e6);
  }

  const other = await gw.http.post(`${BASE}/preview`).query({ cursor: "eyJza2lwIjo1LCJoIjoiYWJjIn0" }).set(a.auth).send(body);
  expect([other.status, other.body.errors?.[0]?.path]).toEqual([422, "cursor"]);
  const bad = await gw.http.post(`${BASE}/preview`).set(a.auth).send({ ...body, from: gen.to, to: gen.from });
  expect([bad.status, bad.body.errors?.[0]?.path]).toEqual([422, "to"]);
});

test("a provider failing answers its reason per provider; the report itself answers", async () => {
  const a = await account();
  google.generateStats({ customerId: a.customer.id, adGroups: 2, days: 2, from: "2026-11-01" });
  google.failNext("RESOURCE_EXHAUSTED", 5);
  const res = await gw.http.post(`${BASE}/preview`).set(a.auth).send({ from: "2026-11-01", to: "2026-11-02", level: "ad_group" });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([]);
  expect(res.body.providers.find((p: { provider: string }) => p.provider === "google_ads")).toMatchObject({ status: "failed", error: { kind: "quota_exhausted" } });
  google.failNext("RESOURCE_EXHAUSTED", 0);
});

test("filters: only the ad groups a plan of this service changed", async () => {
  const a = await account();
  const gen = google.generateStats({ customerId: a.customer.id, adGroups: 4, days: 2, from: "2026-11-01" });
  const changed = gen.adGroupId(2);
  const conn = (await gw.deps.db.connection.findFirst({ where: { accountId: a.accountId, provider: "google_ads" } }))!;
  const planId = newId("pln");
  await gw.deps.db.adsPlan.create({ data: {
    id: planId, accountId: a.accountId, provider: "google_ads", connectionId: conn.id, adAccountId: a.customer.id, category: "tech", strictSafety: true,
    status: "applied", changes: [{ id: "c1", entity_id: changed, field: "keywords", op: "add", item: { key: "x|PHRASE", text: "x" }, trend_id: null }],
    calls: [], diff: [], refused: [], priorState: [], priorStateHash: "sha256:x", expiresAt: new Date(), results: [{ change_id: "c1", ok: true }],
  } });
  for (const filters of [{ changed_by_trendgate: true }, { plan_id: planId }]) {
    const res = await gw.http.post(`${BASE}/preview`).set(a.auth).send({ from: gen.from, to: gen.to, level: "ad_group", filters });
    expect(res.body.data.map((r: { ad_group_id: string }) => r.ad_group_id)).toEqual([changed, changed]);
    expect(sumSpend(res.body.data)).toBe(gen.expected({ level: "ad_group", granularity: "day", adGroupIds: [changed] }).costMicros);
  }
});

test("a small export is the CSV in the response", async () => {
  const a = await account();
  const gen = google.generateStats({ customerId: a.customer.id, adGroups: 2, days: 3, from: "2026-11-01" });
  const res = await gw.http.post(`${BASE}/exports`).set(a.auth).send({ from: gen.from, to: gen.to, level: "ad_group" }).buffer(true).parse((r, cb) => { let t = ""; r.on("data", (c: Buffer) => { t += c; }); r.on("end", () => cb(null, t)); });
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/csv/);
  const lines = (res.body as string).trim().split("\n");
  expect(lines[0]).toMatch(/^date,provider,account_id,campaign_id/);
  expect(lines).toHaveLength(1 + 6);
  expect(JSON.parse(res.headers["x-report-providers"]).find((p: { provider: string }) => p.provider === "google_ads")).toMatchObject({ status: "ok", rows: 6 });
});

test("a large export runs as a job: progress, then a download whose totals equal the provider's", async () => {
  const a = await account({ currency: "USD", timeZone: "America/New_York" });
  const gen = google.generateStats({ customerId: a.customer.id, adGroups: 60, days: 30, from: "2026-10-01" });
  const res = await gw.http.post(`${BASE}/exports`).set(a.auth).send({ from: gen.from, to: gen.to, level: "ad_group" });
  expect(res.status).toBe(202);
  expect(res.headers.location).toBe(`${BASE}/exports/${res.body.id}`);
  const early = await gw.http.get(`${BASE}/exports/${res.body.id}/download`).set(a.auth);
  if (early.status !== 200) expect(early.status).toBe(409); // not ready yet (unless it already is)
  const done = await waitFor(async () => { const e = (await gw.http.get(`${BASE}/exports/${res.body.id}`).set(a.auth)).body; return e.status === "ready" || e.status === "failed" ? e : null; }, { timeoutMs: 30_000 });
  const expected = gen.expected({ level: "ad_group", granularity: "day" });
  expect(done).toMatchObject({ status: "ready", rows_written: expected.rows, download_url: `${BASE}/exports/${res.body.id}/download` });
  const dl = await gw.http.get(done.download_url).set(a.auth).buffer(true).parse((r, cb) => { let t = ""; r.on("data", (c: Buffer) => { t += c; }); r.on("end", () => cb(null, t)); });
  expect(dl.status).toBe(200);
  const lines = (dl.body as string).trim().split("\n");
  expect(lines).toHaveLength(1 + expected.rows);
  const col = lines[0].split(",").indexOf("spend_micros");
  expect(lines.slice(1).reduce((s, l) => s + BigInt(l.split(",")[col]), 0n).toString()).toBe(expected.costMicros);
  expect(Number(dl.headers["content-length"])).toBe(done.bytes);
  // The account is told (GET /api/events, and pushed to subscriptions listing report.export_ready).
  const toldEvents = (await gw.http.get("/api/events?type=report.export_ready").set(a.auth)).body.data as any[];
  expect(catalogProblemsOf(toldEvents)).toEqual([]);
  const told = toldEvents.map((e) => e.data);
  expect(told).toEqual([{ export_id: res.body.id, rows: expected.rows, bytes: done.bytes }]);

  expect((await gw.http.delete(`${BASE}/exports/${res.body.id}`).set(a.auth)).status).toBe(204);
  expect((await gw.http.get(`${BASE}/exports/${res.body.id}`).set(a.auth)).status).toBe(404);
  expect(await gw.deps.db.reportExportChunk.count({ where: { exportId: res.body.id } })).toBe(0);
});

test("a running export cancelled stops reading and keeps no file; another account cannot see it", async () => {
  const a = await account();
  const gen = google.generateStats({ customerId: a.customer.id, adGroups: 400, days: 50, from: "2026-09-01" });
  const total = gen.expected({ level: "ad_group", granularity: "day" }).rows;
  const res = await gw.http.post(`${BASE}/exports`).query({ mode: "job" }).set(a.auth).send({ from: gen.from, to: gen.to, level: "ad_group" });
  expect(res.status).toBe(202);
  expect((await gw.http.get(`${BASE}/exports/${res.body.id}`).set((await gw.account()).auth)).status).toBe(404);
  await waitFor(async () => (await gw.http.get(`${BASE}/exports/${res.body.id}`).set(a.auth)).body.rows_written > 0, { everyMs: 5 });
  expect((await gw.http.delete(`${BASE}/exports/${res.body.id}`).set(a.auth)).status).toBe(204);
  const e = await waitFor(async () => { const x = await gw.deps.db.reportExport.findUnique({ where: { id: res.body.id } }); return x?.finishedAt ? x : null; }, { timeoutMs: 30_000 });
  expect(e.status).toBe("cancelled");
  expect(e.rowsWritten).toBeLessThan(total);
  const searches = google.requests.filter((r) => r.path.endsWith(`/customers/${a.customer.id}/googleAds:search`)).length;
  expect(searches).toBeLessThan(Math.ceil(total / 500)); // it stopped paging
  expect(await gw.deps.db.reportExportChunk.count({ where: { exportId: res.body.id } })).toBe(0);
  expect((await gw.http.get(`${BASE}/exports/${res.body.id}/download`).set(a.auth)).status).toBe(409);
});

test("a client that goes away mid-preview stops the provider reads", async () => {
  const a = await account();
  google.generateStats({ customerId: a.customer.id, adGroups: 50, days: 40, from: "2026-09-01" });
  const reports = () => google.requests.filter((r) => r.path.endsWith(`/customers/${a.customer.id}/googleAds:search`) && /FROM ad_group/.test(String(r.body?.query))).length;
  // A real listening server (not supertest's per-request one, which an aborted request would leave open).
  const server = gw.app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${BASE}/preview`;
  google.slowSearches(800); // the account lookup and every page take 800 ms
  try {
    const client = new AbortController();
    const done = fetch(url, { method: "POST", headers: { ...a.auth, "content-type": "application/json" }, body: JSON.stringify({ from: "2026-09-01", to: "2026-10-10", level: "ad_group" }), signal: client.signal })
      .then(() => "answered", () => "aborted");
    await new Promise((r) => setTimeout(r, 300));
    client.abort(); // during the account lookup
    expect(await done).toBe("aborted");
    await new Promise((r) => setTimeout(r, 2000)); // long enough for the lookup to end and a page to be asked for
    expect(reports()).toBe(0);
  } finally {
    google.slowSearches(0);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
