// The community-ads connector (Reddit Ads Conversions API v3) end to end: browser OAuth (or a conversion
// access token), the selection, pushes queued on the shared outbox and sent in batches per pixel by the worker,
// against the local Reddit stand-in (tests/peers/reddit-ads-server.ts), which validates bodies like the v3 API.
import crypto from "node:crypto";
import { redditAds } from "@trendgate/connector-conversions";
import { testIdPlacementOf } from "../../packages/connectors/conversions/src/reddit-ads/config.ts";
import { MAX_ISOLATION_REQUESTS } from "../../packages/connectors/conversions/src/reddit-ads/client.ts";
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { startRedditAdsServer, type RedditAdsServer } from "../peers/reddit-ads-server.ts";

const BASE = "/api/integrations/community-ads";
let reddit: RedditAdsServer;
let stack: Stack;
let n = 0;

beforeAll(async () => {
  reddit = await startRedditAdsServer();
  stack = await startStack({
    REDDIT_ADS_CLIENT_ID: reddit.app.clientId, REDDIT_ADS_CLIENT_SECRET: reddit.app.clientSecret, REDDIT_ADS_AUTHORIZE_URL: reddit.authorizeUrl,
    REDDIT_ADS_TOKEN_URL: reddit.tokenUrl, REDDIT_ADS_API_URL: reddit.url, OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1",
  });
});
afterAll(async () => { await stack.close(); await reddit.close(); });

type Account = Awaited<ReturnType<Stack["gw"]["account"]>>;
const sha = (s: string) => crypto.createHash("sha256").update(s).digest("hex");
const pixel = () => `a2_pix${++n}${Date.now().toString(36)}`;

async function connectOAuth(a: Account) {
  const start = await stack.gw.http.get(`${BASE}/auth`).set(a.auth);
  expect(start.status).toBe(200);
  const back = new URL((await fetch(start.body.authorization_url, { redirect: "manual" })).headers.get("location")!);
  const cb = await stack.gw.http.get(`${back.pathname}${back.search}`);
  if (cb.status !== 200) throw new Error(`callback: ${cb.status} ${cb.text}`);
}

async function connectedAccount(mode: "oauth" | "token" = "token", event_name = "purchase") {
  const a = await stack.gw.account();
  if (mode === "oauth") await connectOAuth(a);
  else expect((await stack.gw.http.put(`${BASE}/token`).set(a.auth).send({ access_token: reddit.addConversionToken() })).status).toBe(200);
  const pixelId = pixel();
  const sel = await stack.gw.http.put(`${BASE}/selection`).set(a.auth).send({ account_id: "t2_abc123", pixel_id: pixelId, event_name });
  expect(sel.status).toBe(200);
  return { ...a, pixelId };
}

const push = (a: Account, body: Record<string, unknown>, key?: string) => {
  const r = stack.gw.http.post(`${BASE}/push`).set(a.auth);
  if (key) r.set("Idempotency-Key", key);
  return r.send(body);
};
const event = (gwAuth: Account, id: string) => stack.gw.http.get(`${BASE}/events/${id}`).set(gwAuth.auth).then((r) => r.body);
const settled = (a: Account, id: string, status = "succeeded") => waitFor(async () => { const e = await event(a, id); return e.status === status ? e : null; });

test("browser OAuth asks for adsconversions with duration=permanent, and a push reaches the pixel with the exact v3 body", async () => {
  const a = await stack.gw.account();
  const start = await stack.gw.http.get(`${BASE}/auth`).set(a.auth);
  const url = new URL(start.body.authorization_url);
  expect(url.origin + url.pathname).toBe(reddit.authorizeUrl);
  expect(url.searchParams.get("scope")).toBe("adsconversions");
  expect(url.searchParams.get("duration")).toBe("permanent");
  expect(url.searchParams.get("redirect_uri")).toMatch(/\/api\/integrations\/oauth\/callback$/);
  const b = await connectedAccount("oauth");
  expect(reddit.counts.authorization_code).toBeGreaterThanOrEqual(1);
  const status = await stack.gw.http.get(`${BASE}/connection`).set(b.auth);
  expect(status.body.status).toBe("connected");
  expect(JSON.stringify(status.body)).not.toMatch(/ads-at-|ads-rt-/);

  const at = Date.now() - 3_600_000;
  const res = await push(b, {
    event_name: "purchase",
    data: {
      conversion_id: "order_123", event_at: new Date(at).toISOString(), click_id: "rdt_cid_1", email: "  Jane.Doe@Example.COM ", phone: "+1 (555) 010-2030",
      external_id: "user-42", ip_address: "203.0.113.7", user_agent: "Mozilla/5.0 (X11)", value: 159.99, currency: "USD", item_count: 2,
      products: [{ id: "sku1", name: "Boots", category: "shoes" }],
    },
  });
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ status: "pending", conversion_id: "order_123", duplicate: false });
  const done = await settled(b, res.body.id);
  expect(done.attempts).toHaveLength(1);
  const got = reddit.unique(b.pixelId).get("order_123")!;
  expect(got.event).toEqual({
    event_at: at, action_source: "WEBSITE", type: { tracking_type: "PURCHASE" }, click_id: "rdt_cid_1",
    user: { email: sha("jane.doe@example.com"), phone_number: sha("+15550102030"), external_id: sha("user-42"), ip_address: sha("203.0.113.7"), user_agent: "Mozilla/5.0 (X11)" },
    metadata: { conversion_id: "order_123", value: 159.99, currency: "USD", item_count: 2, products: [{ id: "sku1", name: "Boots", category: "shoes" }] },
  });
  expect(JSON.stringify(reddit.received)).not.toContain("Jane");
  const row = await stack.gw.deps.db.outboxMessage.findUnique({ where: { id: res.body.id } });
  expect(JSON.stringify(row!.payload)).not.toMatch(/Jane|203\.0\.113|user-42|555/); // hashed before it is stored
});

test("selection and push are checked: formats, a connection first, event_at within 7 days and not in the future", async () => {
  const a = await stack.gw.account();
  const noConn = await stack.gw.http.put(`${BASE}/selection`).set(a.auth).send({ account_id: "t2_abc123", pixel_id: "a2_abc123", event_name: "lead" });
  expect(noConn.status).toBe(409);
  expect((await push(a, { data: { value: 1 } })).status).toBe(409);
  const b = await connectedAccount();
  const bad = await stack.gw.http.put(`${BASE}/selection`).set(b.auth).send({ account_id: "t2_abc123", pixel_id: "px-1", event_name: "lead" });
  expect(bad.status).toBe(422);
  expect(JSON.stringify(bad.body)).toContain("pixel_id");
  const old = await push(b, { data: { event_at: new Date(Date.now() - 8 * 86_400_000).toISOString() } });
  expect(old.status).toBe(422);
  expect(old.body.errors[0].path).toBe("data.event_at");
  const future = await push(b, { data: { event_at: Date.now() + 3_600_000 } });
  expect(future.status).toBe(422);
  expect(future.body.errors[0].path).toBe("data.event_at");
});

test("events are sent in batches per pixel, de-duplicated on conversion_id, custom names as CUSTOM", async () => {
  const a = await connectedAccount("token", "Newsletter Optin");
  const before = reddit.requests.length;
  const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => push(a, { data: { conversion_id: `c${i}`, value: i } }).then((r) => { expect(r.status).toBe(202); return r.body.id as string; })));
  const dup = await push(a, { data: { conversion_id: "c3", value: 99 } });
  expect(dup.body).toMatchObject({ duplicate: true, id: ids[3] });
  for (const id of ids) await settled(a, id);
  const mine = reddit.requests.slice(before).filter((r) => r.pixelId === a.pixelId);
  expect(mine.reduce((s, r) => s + r.size, 0)).toBe(8); // each event once
  expect(mine.length).toBeLessThan(8); // batched
  const ev = reddit.unique(a.pixelId).get("c3")!.event;
  expect(ev.type).toEqual({ tracking_type: "CUSTOM", custom_event_name: "Newsletter Optin" });
  expect(ev.metadata.value).toBe(3);
});

test("the same push with the same Idempotency-Key sends one event; test mode carries test_id and is not batched with real events", async () => {
  const a = await connectedAccount("token", "sign_up");
  const key = `idem-${crypto.randomUUID()}`;
  const one = await push(a, { data: { value: 5 } }, key);
  const two = await push(a, { data: { value: 5 } }, key);
  expect(two.status).toBe(202);
  expect(two.body.id).toBe(one.body.id);
  const t = await push(a, { data: { conversion_id: "t1" }, test_id: "t2_test_42" });
  await settled(a, one.body.id);
  await settled(a, t.body.id);
  const events = reddit.received.filter((r) => r.pixelId === a.pixelId);
  expect(events).toHaveLength(2);
  expect(events.find((e) => e.event.metadata.conversion_id === "t1")).toMatchObject({ testId: "t2_test_42", testIdIn: "body" }); // the default placement
  expect(events.find((e) => e.event.metadata.conversion_id !== "t1")!.testId).toBeNull();
  expect(events.find((e) => e.event.metadata.conversion_id !== "t1")!.event.type).toEqual({ tracking_type: "SIGN_UP" });
});

test("429 is retried after Retry-After and every attempt is recorded; an event the provider refuses by name fails alone", async () => {
  const a = await connectedAccount();
  reddit.failNext(1, 429);
  const r = await push(a, { data: { conversion_id: "rl1" } });
  const done = await settled(a, r.body.id);
  expect(done.attempts.map((x: any) => [x.outcome, x.response_status])).toEqual([["retrying", 429], ["succeeded", 200]]);
  // The batch leader's own failed attempt ends its job as failed (Bull Board's Failed tab), once recorded.
  const first = await stack.gw.deps.queues.get(QUEUES.conversionEvents).getJob(`${r.body.id}-1`);
  expect(await first?.getState()).toBe("failed");
  expect(first?.failedReason).toMatch(/^attempt 1 failed: rate_limited: .*; attempt 2 at /);

  reddit.refuseConversion("bad-1");
  const [good, bad] = await Promise.all([push(a, { data: { conversion_id: "good-1" } }), push(a, { data: { conversion_id: "bad-1" } })]);
  const failed = await settled(a, bad.body.id, "failed");
  expect(failed.last_error).toContain("conversion refused");
  await settled(a, good.body.id);
  expect(reddit.unique(a.pixelId).has("good-1")).toBe(true);
  expect(reddit.unique(a.pixelId).has("bad-1")).toBe(false);
});

test("a refused token sets needs_reauth; pushed events wait and are sent once the account connects again", async () => {
  const a = await connectedAccount();
  reddit.revokeAll();
  const r = await push(a, { data: { conversion_id: "wait-1" } });
  await waitFor(async () => (await stack.gw.http.get(`${BASE}/connection`).set(a.auth)).body.status === "needs_reauth");
  expect((await event(a, r.body.id)).status).toBe("pending");
  expect((await stack.gw.http.put(`${BASE}/token`).set(a.auth).send({ access_token: reddit.addConversionToken() })).status).toBe(200);
  await stack.gw.deps.queues.get(QUEUES.conversionEvents).promoteJobs(); // the deferred job would look again in 30 s
  const done = await settled(a, r.body.id);
  expect(done.status).toBe("succeeded");
  expect(reddit.unique(a.pixelId).has("wait-1")).toBe(true);
});

test("an expiring OAuth token is refreshed (raw Basic client auth, as Reddit compares it); a refused refresh token sets needs_reauth and events wait", async () => {
  reddit.accessTokenTtl = 1; // always inside the refresh buffer: every send refreshes first
  const a = await connectedAccount("oauth");
  reddit.accessTokenTtl = 3600;
  const refreshes = reddit.counts.refresh_token;
  const r = await push(a, { data: { conversion_id: "refreshed-1" } });
  await settled(a, r.body.id);
  expect(reddit.counts.refresh_token).toBe(refreshes + 1);
  expect(reddit.unique(a.pixelId).has("refreshed-1")).toBe(true);

  reddit.accessTokenTtl = 1;
  const b = await connectedAccount("oauth");
  reddit.accessTokenTtl = 3600;
  reddit.revokeAll(); // the user removed the app at Reddit: the refresh token is refused (invalid_grant)
  const w = await push(b, { data: { conversion_id: "after-revoke" } });
  await waitFor(async () => (await stack.gw.http.get(`${BASE}/connection`).set(b.auth)).body.status === "needs_reauth");
  expect((await event(b, w.body.id)).status).toBe("pending");
  await connectOAuth(b); // authorize again in the browser
  await stack.gw.deps.queues.get(QUEUES.conversionEvents).promoteJobs();
  await settled(b, w.body.id);
  expect(reddit.unique(b.pixelId).has("after-revoke")).toBe(true);
});

test("GET events lists the account's pushed events newest first, page by page, filtered by status, each as GET events/{id} answers it", async () => {
  const a = await connectedAccount();
  const ids: string[] = [];
  for (const c of ["list-1", "list-2", "list-3"]) ids.push((await push(a, { data: { conversion_id: c } })).body.id);
  for (const id of ids) await settled(a, id);
  const list = (q: string) => stack.gw.http.get(`${BASE}/events${q}`).set(a.auth);

  const first = await list("?limit=2");
  expect(first.status).toBe(200);
  expect(first.body.data.map((e: any) => e.id)).toEqual([ids[2], ids[1]]);
  expect(first.body.next_cursor).toEqual(expect.any(String));
  for (const e of first.body.data) expect(e).toEqual(await event(a, e.id));
  const second = await list(`?limit=2&cursor=${first.body.next_cursor}`);
  expect(second.body.data.map((e: any) => e.conversion_id)).toEqual(["list-1"]);
  expect(second.body.next_cursor).toBeNull();

  expect((await list("?status=succeeded")).body.data.map((e: any) => e.id)).toEqual([...ids].reverse());
  expect((await list("?status=failed")).body).toEqual({ data: [], next_cursor: null });
  expect((await list("?status=sent")).status).toBe(422);
  expect((await list("?limit=0")).status).toBe(422);
  const other = await stack.gw.account();
  expect((await stack.gw.http.get(`${BASE}/events`).set(other.auth)).body.data).toEqual([]);
});

describe("test_id placement (REDDIT_ADS_TEST_ID_PLACEMENT)", () => {
  const events = (conversion_id: string) => [{ event_name: "purchase", data: { conversion_id, event_at: Date.now() - 60_000 } }];
  const clientWith = (env: Record<string, string>) => {
    // The stand-in is on loopback: the configuration that reaches it allows it, as the stack's does.
    const ctx = { baseUrl: reddit.url, accessToken: reddit.addConversionToken(), env: { OUTBOUND_ALLOWLIST: "127.0.0.1", ...env } };
    return redditAds.client(ctx);
  };

  test.each([
    [{}, "body"],
    [{ REDDIT_ADS_TEST_ID_PLACEMENT: "body" }, "body"],
    [{ REDDIT_ADS_TEST_ID_PLACEMENT: "query" }, "query"],
  ] as const)("with %j a test event reaches Reddit with its test_id in the %s", async (env, where) => {
    const pixelId = pixel();
    const conversionId = `placed-${where}-${Object.keys(env).length}`;
    const out = await clientWith(env).sendBatch(pixelId, events(conversionId), { testId: "t2_test_7" });
    expect(out).toEqual([{ ok: true, status: 200 }]);
    expect(reddit.unique(pixelId).get(conversionId)).toMatchObject({ testId: "t2_test_7", testIdIn: where });
    await clientWith(env).sendBatch(pixelId, events(`${conversionId}-real`)); // without a test id: none anywhere
    expect(reddit.unique(pixelId).get(`${conversionId}-real`)).toMatchObject({ testId: null, testIdIn: null });
  });

  test("an unknown placement is refused naming the variable; Reddit refuses a test_id given in both places or an unknown parameter", async () => {
    expect(() => testIdPlacementOf({ REDDIT_ADS_TEST_ID_PLACEMENT: "header" })).toThrow(/REDDIT_ADS_TEST_ID_PLACEMENT must be body or query/);
    const token = reddit.addConversionToken();
    const pixelId = pixel();
    const send = (query: string, data: Record<string, unknown>) => fetch(`${reddit.url}/api/v3/pixels/${pixelId}/conversion_events${query}`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ data: { ...data, events: [{ event_at: Date.now(), action_source: "WEBSITE", type: { tracking_type: "PURCHASE" }, user: {}, metadata: { conversion_id: "x1" } }] } }),
    });
    const both = await send("?test_id=t2_a", { test_id: "t2_a" });
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({ error: { code: "VALIDATION_ERROR", fields: [{ field: "test_id" }] } });
    const unknown = await send("?test=t2_a", {});
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { code: "VALIDATION_ERROR", fields: [{ field: "test" }] } });
    expect(reddit.unique(pixelId).size).toBe(0);
  });
});

describe("refusals that name no event (Reddit's flat 400s)", () => {
  const client = () => redditAds.client({ baseUrl: reddit.url, accessToken: reddit.addConversionToken(), env: { OUTBOUND_ALLOWLIST: "127.0.0.1" } });
  const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ event_name: "purchase", data: { conversion_id: `${prefix}-${i}`, event_at: Date.now() - 60_000 } }));
  const flat = async <T>(work: () => Promise<T>): Promise<T> => {
    reddit.flatErrors = true;
    try { return await work(); } finally { reddit.flatErrors = false; }
  };

  test("the batch is halved until the refused events are isolated: they fail with Reddit's message, the rest arrive", async () => {
    const pixelId = pixel();
    const events = batch("iso", 40);
    reddit.refuseConversion("iso-7");
    reddit.refuseConversion("iso-31");
    const refusedBefore = reddit.refusedRequests;
    const out = await flat(() => client().sendBatch(pixelId, events));

    const failed = out.flatMap((r, i) => (r.ok ? [] : [[events[i].data.conversion_id, r.error.kind, r.error.message]]));
    expect(failed).toEqual([
      ["iso-7", "bad_request", "reddit_ads: refused the event: invalid metadata.conversion_id: conversion refused"],
      ["iso-31", "bad_request", "reddit_ads: refused the event: invalid metadata.conversion_id: conversion refused"],
    ]);
    expect([...reddit.unique(pixelId).keys()].sort()).toEqual(events.map((e) => e.data.conversion_id).filter((id) => id !== "iso-7" && id !== "iso-31").sort());
    // 40 events, 2 bad: the first request, then about 2 x 2 x log2(40) halves, far fewer than one request per event
    expect(reddit.refusedRequests - refusedBefore).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(40)));
  });

  test("a refusal of every event stops after the isolation budget instead of sending each one alone", async () => {
    const pixelId = pixel();
    const events = batch("all-bad", 300).map((e) => ({ ...e, data: { ...e.data, event_at: Date.now() - 30 * 86_400_000 } })); // all too old
    const before = reddit.refusedRequests;
    const out = await flat(() => client().sendBatch(pixelId, events));
    expect(out.every((r) => !r.ok && r.error.kind === "bad_request" && /event_at: is more than 7 days in the past/.test(r.error.message))).toBe(true);
    expect(reddit.refusedRequests - before).toBeLessThanOrEqual(1 + MAX_ISOLATION_REQUESTS);
    expect(reddit.unique(pixelId).size).toBe(0);
  });

  test("through the worker: one bad event of a batch fails alone with Reddit's message, its neighbours succeed", async () => {
    const a = await connectedAccount();
    reddit.refuseConversion("flat-bad");
    await flat(async () => {
      const [good1, bad, good2] = await Promise.all(["flat-good-1", "flat-bad", "flat-good-2"].map((id) => push(a, { data: { conversion_id: id } })));
      const failed = await settled(a, bad.body.id, "failed");
      expect(failed.last_error).toContain("invalid metadata.conversion_id: conversion refused");
      await settled(a, good1.body.id);
      await settled(a, good2.body.id);
    });
    expect(reddit.unique(a.pixelId).has("flat-good-1") && reddit.unique(a.pixelId).has("flat-good-2")).toBe(true);
    expect(reddit.unique(a.pixelId).has("flat-bad")).toBe(false);
  });
});
