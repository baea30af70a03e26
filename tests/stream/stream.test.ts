import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { WebSocket, type ClientOptions } from "ws";
import { TrendEvent } from "@trendgate/contracts";
import { publishTrendEvents } from "../../packages/trends/src/events/publish.ts";
import { attachStream, type TrendStream } from "../../apps/gateway/src/stream/index.ts";
import { compareStreamIds } from "../../apps/gateway/src/stream/ids.ts";
import { waitFor } from "../helpers/config.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { trendEvent } from "../helpers/stack.ts";

interface Running { gw: TestGateway; server: Server; stream: TrendStream; url: string }

async function start(env: Record<string, string> = {}): Promise<Running> {
  const gw = await startGateway(env);
  const server = await new Promise<Server>((resolve) => { const s = gw.app.listen(0, "127.0.0.1", () => resolve(s)); });
  const stream = attachStream(server, gw.deps);
  return { gw, server, stream, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/stream` };
}
async function stop(r: Running) {
  await r.stream.close();
  await new Promise((resolve) => r.server.close(resolve));
  await r.gw.close();
}

interface Client {
  ws: WebSocket;
  messages: { id: string; event: TrendEvent }[];
  closed: Promise<{ code: number; reason: string }>;
}
const sockets: WebSocket[] = [];
function connect(url: string, opts: ClientOptions = {}): Promise<Client> {
  const ws = new WebSocket(url, opts);
  sockets.push(ws);
  const messages: Client["messages"] = [];
  ws.on("message", (data) => messages.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, messages, closed }));
    ws.once("unexpected-response", (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { res })));
    ws.once("error", reject);
  });
}
/** The HTTP answer to an upgrade that was refused. */
function refused(url: string, opts: ClientOptions = {}) {
  const ws = new WebSocket(url, opts);
  ws.on("error", () => {});
  return new Promise<{ status: number; headers: Record<string, unknown>; body: any }>((resolve, reject) => {
    ws.once("open", () => { ws.terminate(); reject(new Error("connected")); });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(body) }));
    });
  });
}
const bearer = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let main: Running;
beforeAll(async () => { main = await start(); });
afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  await stop(main);
});
const publish = (r: Running, events: TrendEvent[]) => publishTrendEvents(r.gw.deps, events);

describe("authentication", () => {
  test("connection attempts count against the key's quota: over it, 429 with Retry-After and no upgrade", async () => {
    const limited = await start({ RATE_LIMIT_PLANS: "free:2" });
    try {
      const a = await limited.gw.account();
      const first = await connect(limited.url, bearer(a.key));
      expect((await limited.gw.http.get("/api/keys").set(a.auth)).status).toBe(200); // the shared quota: 2 of 2 used
      const over = await refused(limited.url, bearer(a.key));
      expect(over.status).toBe(429);
      expect(over.body.code).toBe("rate_limited");
      expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
      expect(over.headers["x-ratelimit-remaining"]).toBe("0");
      first.ws.close();
    } finally {
      await stop(limited);
    }
  });

  test("revoking the key closes its open sockets with 1008; other keys' sockets stay", async () => {
    const a = await main.gw.account();
    const other = await main.gw.http.post("/api/keys").set(a.auth).send({ name: "dashboard" });
    const doomed = await connect(main.url, bearer(other.body.key));
    const kept = await connect(main.url, bearer(a.key));
    expect((await main.gw.http.delete(`/api/keys/${other.body.id}`).set(a.auth)).status).toBe(204);
    const closed = await Promise.race([doomed.closed, sleep(3000).then(() => null)]);
    expect(closed).toEqual({ code: 1008, reason: "API key revoked or expired" });
    expect(kept.ws.readyState).toBe(WebSocket.OPEN);
    kept.ws.close();
  });

  test("a revoked socket is one drop, though the revocation and a heartbeat both re-check it", async () => {
    const r = await start({ STREAM_HEARTBEAT_MS: "100" });
    try {
      const a = await r.gw.account();
      const other = await r.gw.http.post("/api/keys").set(a.auth).send({ name: "dashboard" });
      const doomed = await connect(r.url, bearer(other.body.key));
      expect((await r.gw.http.delete(`/api/keys/${other.body.id}`).set(a.auth)).status).toBe(204);
      expect((await doomed.closed).code).toBe(1008);
      await sleep(500); // several heartbeats later
      const metrics = await r.gw.deps.metrics.getSingleMetricAsString("trend_stream_drops_total");
      expect(metrics).toMatch(/reason="unauthorized"} 1$/m);
    } finally {
      await stop(r);
    }
  });

  test("no key, a malformed key or an unknown key: 401 with WWW-Authenticate: Bearer, no upgrade", async () => {
    const none = await refused(main.url);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(none.headers["content-type"]).toBe("application/problem+json");
    expect(none.body.code).toBe("unauthorized");
    const bad = await refused(main.url, bearer("tg_nope"));
    expect(bad.status).toBe(401);
    expect(bad.headers["www-authenticate"]).toMatch(/invalid_token/);
    const unknown = await refused(`${main.url}?access_token=tg_abcdefghijkl_${"x".repeat(43)}`);
    expect(unknown.status).toBe(401);
  });

  test("bad query parameters answer 422 naming them", async () => {
    const a = await main.gw.account();
    const res = await refused(`${main.url}?category=Not%20A%20Path&last_event_id=abc`, bearer(a.key));
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(["category", "last_event_id"]);
  });

  test("a valid key connects (header or access_token); another account's events never arrive", async () => {
    const a = await main.gw.account();
    const b = await main.gw.account();
    const ca = await connect(main.url, bearer(a.key));
    const cb = await connect(`${main.url}?access_token=${encodeURIComponent(b.key)}`);
    const ea = [trendEvent(a.accountId), trendEvent(a.accountId)];
    const eb = [trendEvent(b.accountId)];
    await publish(main, [...eb, ea[0]]);
    await publish(main, [ea[1]]);
    await waitFor(async () => ca.messages.length === 2 && cb.messages.length === 1);
    await sleep(200);
    expect(ca.messages.map((m) => m.event.id)).toEqual(ea.map((e) => e.id));
    expect(cb.messages.map((m) => m.event.id)).toEqual(eb.map((e) => e.id));
    expect(ca.messages[0].event).toEqual(ea[0]); // the TrendEvent as published
    // The catalog's stream message (/asyncapi.json): {id, event: TrendEvent}.
    for (const m of ca.messages) expect({ id: typeof m.id, event: TrendEvent.safeParse(m.event).success }).toEqual({ id: "string", event: true });
    expect(ca.messages.every((m) => m.event.account_id === a.accountId)).toBe(true);
    ca.ws.close();
    cb.ws.close();
    await Promise.all([ca.closed, cb.closed]);
    await waitFor(async () => main.stream.stats().readers === 0); // the last socket of an account stops its reader
  });
});

test("category=tech receives tech and tech/ai, not food or technology", async () => {
  const a = await main.gw.account();
  const c = await connect(`${main.url}?category=tech`, bearer(a.key));
  const events = ["tech/ai", "food", "tech", "technology", "food/tech"].map((category) => trendEvent(a.accountId, { category }));
  await publish(main, events);
  await waitFor(async () => c.messages.length === 2);
  await sleep(200);
  expect(c.messages.map((m) => m.event.category)).toEqual(["tech/ai", "tech"]);
  c.ws.close();
});

test("last_event_id replays exactly the events after it, in order, then continues live without duplicates", async () => {
  const a = await main.gw.account();
  const first = await connect(main.url, bearer(a.key));
  const events = Array.from({ length: 6 }, (_, i) => trendEvent(a.accountId, { trend_id: `t${i}`, category: i % 2 ? "food" : "tech/ai" }));
  await publish(main, events.slice(0, 3));
  await publish(main, events.slice(3));
  await waitFor(async () => first.messages.length === 6);
  first.ws.close();
  const ids = first.messages.map((m) => m.id);
  expect(ids).toEqual([...ids].sort(compareStreamIds)); // stream order = publish order

  const resumed = await connect(`${main.url}?last_event_id=${ids[1]}`, bearer(a.key));
  await waitFor(async () => resumed.messages.length === 4);
  expect(resumed.messages.map((m) => m.id)).toEqual(ids.slice(2));
  expect(resumed.messages.map((m) => m.event.id)).toEqual(events.slice(2).map((e) => e.id));
  const live = trendEvent(a.accountId, { trend_id: "live" });
  await publish(main, [live]);
  await waitFor(async () => resumed.messages.length === 5);
  await sleep(200);
  expect(resumed.messages.map((m) => m.event.id)).toEqual([...events.slice(2), live].map((e) => e.id));

  // Resume combines with the category filter; resuming from the last id replays nothing.
  const filtered = await connect(`${main.url}?last_event_id=${ids[0]}&category=food`, bearer(a.key));
  await waitFor(async () => filtered.messages.length === 3);
  expect(filtered.messages.map((m) => m.event.id)).toEqual([events[1], events[3], events[5]].map((e) => e.id));
  const caughtUp = await connect(`${main.url}?last_event_id=${resumed.messages[4].id}`, bearer(a.key));
  await sleep(300);
  expect(caughtUp.messages).toHaveLength(0);
  for (const c of [resumed, filtered, caughtUp]) c.ws.close();
});

test("a last_event_id the stream does not hold (invented, or older than the events kept) is refused with 422 saying what to do", async () => {
  const a = await main.gw.account();
  const empty = await refused(`${main.url}?last_event_id=1795330566123-0`, bearer(a.key));
  expect(empty.status).toBe(422);
  expect(empty.body.errors[0]).toMatchObject({ path: "last_event_id", code: "unknown_event_id", message: expect.stringMatching(/holds none yet/) });

  const first = await connect(main.url, bearer(a.key));
  await publish(main, [trendEvent(a.accountId, { trend_id: "r1" }), trendEvent(a.accountId, { trend_id: "r2" })]);
  await waitFor(async () => first.messages.length === 2);
  first.ws.close();
  const [oldest, newest] = first.messages.map((m) => m.id);
  const [ms] = newest.split("-");
  const invented = await refused(`${main.url}?last_event_id=${BigInt(ms) + 999n}-0`, bearer(a.key));
  expect(invented.body.errors[0].message).toMatch(new RegExp(`its events run from ${oldest} to ${newest}`));
  const tooOld = await refused(`${main.url}?last_event_id=1-0`, bearer(a.key));
  expect(tooOld.status).toBe(422);
  expect(tooOld.body.errors[0].message).toMatch(/older than the oldest event kept .*GET \/api\/trends/);
  const ok = await connect(`${main.url}?last_event_id=${oldest}`, bearer(a.key)); // a held id still resumes
  await waitFor(async () => ok.messages.length === 1);
  ok.ws.close();
});

test("open sockets per API key are capped (STREAM_MAX_SOCKETS_PER_KEY): the next is refused with 429 until one closes", async () => {
  const capped = await start({ STREAM_MAX_SOCKETS_PER_KEY: "3" });
  try {
    const a = await capped.gw.account();
    const open = await Promise.all([0, 1, 2].map(() => connect(capped.url, bearer(a.key))));
    const over = await refused(capped.url, bearer(a.key));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: "too_many_connections", detail: expect.stringContaining("at most 3") });
    open[0].ws.close();
    await open[0].closed;
    await waitFor(async () => capped.stream.stats().clients === 2);
    const again = await connect(capped.url, bearer(a.key));
    for (const c of [again, open[1], open[2]]) c.ws.close();
  } finally {
    await stop(capped);
  }
});

test("the caps hold across gateways: sockets of one account on two gateways count together (STREAM_MAX_SOCKETS_PER_ACCOUNT)", async () => {
  const shared = { QUEUE_PREFIX: `t${Date.now().toString(36)}x`, STREAM_MAX_SOCKETS_PER_ACCOUNT: "3", STREAM_MAX_SOCKETS_PER_KEY: "2" };
  const one = await start(shared);
  const two = await start(shared);
  try {
    const a = await one.gw.account();
    const second = await one.gw.http.post("/api/keys").set(a.auth).send({ name: "dashboard" });
    const open = [await connect(one.url, bearer(a.key)), await connect(two.url, bearer(a.key))];
    // The key's cap counts its socket on the other gateway too.
    const keyOver = await refused(two.url, bearer(a.key));
    expect(keyOver.status).toBe(429);
    expect(keyOver.body).toMatchObject({ code: "too_many_connections", detail: expect.stringMatching(/^This API key .*at most 2/) });
    open.push(await connect(two.url, bearer(second.body.key)));
    // Three open for the account, on two gateways and two keys: a fourth is refused on either gateway.
    for (const r of [one, two]) {
      const over = await refused(r.url, bearer(second.body.key));
      expect(over.status).toBe(429);
      expect(over.body.detail).toMatch(/^This account already has 3 open stream connections \(at most 3\)/);
    }
    // Another account is not held back by it.
    const b = await two.gw.account();
    open.push(await connect(two.url, bearer(b.key)));
    // Closing one on gateway one frees a place on gateway two.
    open[0].ws.close();
    await open[0].closed;
    await waitFor(async () => {
      try { open.push(await connect(two.url, bearer(second.body.key))); return true; } catch { return false; }
    });
    for (const c of open.slice(1)) c.ws.close();
  } finally {
    await stop(one);
    await stop(two);
  }
});

test("a socket left counted by a gateway that died stops counting after three heartbeats; live ones are renewed", async () => {
  const r = await start({ STREAM_MAX_SOCKETS_PER_ACCOUNT: "2", STREAM_HEARTBEAT_MS: "200" });
  try {
    const a = await r.gw.account();
    const live = await connect(r.url, bearer(a.key));
    // What a killed gateway leaves behind: a lease nobody renews or releases.
    const key = `${r.gw.deps.queues.prefix}:stream-sockets:${a.accountId}`;
    await r.gw.deps.redis.zadd(key, Date.now() + 600, "dead-gateway|socket");
    expect((await refused(r.url, bearer(a.key))).status).toBe(429);
    await waitFor(async () => {
      try { const c = await connect(r.url, bearer(a.key)); c.ws.close(); return true; } catch { return false; }
    });
    // The live socket, well past three heartbeats, still counts.
    await sleep(800);
    expect(await r.gw.deps.redis.zscore(key, "dead-gateway|socket")).toBeNull();
    expect(await r.gw.deps.redis.zcard(key)).toBeGreaterThanOrEqual(1);
    expect(live.ws.readyState).toBe(WebSocket.OPEN);
    live.ws.close();
    await live.closed;
    await waitFor(async () => (await r.gw.deps.redis.zcard(key)) === 0);
  } finally {
    await stop(r);
  }
});

test("heartbeat: a client that does not answer pings is terminated; one that does stays", async () => {
  const hb = await start({ STREAM_HEARTBEAT_MS: "150" });
  try {
    const a = await hb.gw.account();
    const silent = await connect(hb.url, { ...bearer(a.key), autoPong: false });
    const healthy = await connect(hb.url, bearer(a.key));
    // Not waiting for a particular ping: on a loaded machine the first one can arrive before a listener would be
    // attached, and the next tick then terminates instead of pinging again.
    const { code } = await silent.closed; // terminated: no close frame
    expect(code).toBe(1006);
    await sleep(400);
    expect(healthy.ws.readyState).toBe(WebSocket.OPEN);
    await waitFor(async () => hb.stream.stats().sockets === 1 && hb.stream.stats().clients === 1);
    healthy.ws.close();
    await healthy.closed;
  } finally {
    await stop(hb);
  }
});

test("a client that stops reading is closed with 1013 'slow consumer' and released; others keep receiving", async () => {
  const MAX = 64 * 1024;
  const slowGw = await start({ STREAM_MAX_BUFFER_BYTES: String(MAX) });
  try {
    const a = await slowGw.gw.account();
    const slow = await connect(slowGw.url, bearer(a.key));
    const fast = await connect(slowGw.url, bearer(a.key));
    (slow.ws as any)._socket.pause(); // stops reading: the kernel buffers fill, then the gateway's
    // Events are capped (summary 1,000 characters, 10 next steps of 300): send many of the largest allowed.
    const big = { summary: "x".repeat(1000), recommended_next_steps: Array.from({ length: 10 }, () => "y".repeat(300)) };
    let published = 0;
    for (let batch = 0; batch < 600 && slowGw.stream.stats().clients === 2; batch++) {
      await publish(slowGw, Array.from({ length: 20 }, () => trendEvent(a.accountId, big)));
      published += 20;
      await waitFor(async () => fast.messages.length === published, { timeoutMs: 20_000 });
    }
    // Dropped server-side: no longer subscribed, nothing more queued for it.
    expect(slowGw.stream.stats()).toMatchObject({ clients: 1, readers: 1 });

    (slow.ws as any)._socket.resume(); // reads what was already in flight, then the close frame
    const { code, reason } = await slow.closed;
    expect(code).toBe(1013);
    expect(reason).toBe("slow consumer");
    expect(slow.messages.length).toBeLessThan(published);
    await waitFor(async () => slowGw.stream.stats().sockets === 1); // its server socket is gone too

    // The fast client got everything, and still does.
    const more = trendEvent(a.accountId);
    await publish(slowGw, [more]);
    await waitFor(async () => fast.messages.length === published + 1);
    expect(fast.messages.at(-1)!.event.id).toBe(more.id);
    const metrics = await slowGw.gw.deps.metrics.getSingleMetricAsString("trend_stream_drops_total");
    expect(metrics).toMatch(/reason="slow_consumer"} 1/);
    fast.ws.close();
  } finally {
    await stop(slowGw);
  }
}, 60_000);
