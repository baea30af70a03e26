import { QUEUES } from "@trendgate/contracts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { waitFor } from "../helpers/config.ts";
import { snowflake, startXServer, type XPostFixture, type XServer } from "../peers/x-server.ts";

// X's recent search refuses (400) a since_id from before its 7-day window and a query it cannot parse. A term quiet
// for a week (or a connection that waited a week in needs_reauth) must not put the connection in `error`, and one
// term X refuses must not stop the others.

const BEARER = "app-bearer-token";
const BASE = "/api/integrations/social";
const DAY_MS = 24 * 3_600_000;

let stack: Stack;
let xp: XServer;

beforeAll(async () => {
  xp = await startXServer();
  // The scheduler ticks hourly here: each test polls with tick() when it wants to.
  stack = await startStack({ OUTBOUND_ALLOWLIST: "127.0.0.1", SOCIAL_POLL_INTERVAL_SECONDS: "3600", SOCIAL_POLL_TICK_SECONDS: "3600" });
});
afterAll(async () => {
  await stack?.close();
  await xp?.close();
});
beforeEach(async () => {
  await db().socialConnection.updateMany({ data: { nextPollAt: null } });
  xp.reset();
  xp.addAppToken(BEARER);
  xp.setData({ users: [{ id: "11", name: "Ada", username: "ada" }] });
});

const db = () => stack.gw.deps.db;
let seq = 0;
/** A post n minutes old; its id carries its time, as X's do. */
function post(n: number, text: string): XPostFixture {
  const at = Date.now() - n * 60_000;
  return {
    id: snowflake(at, seq++), text, author_id: "11", created_at: new Date(at).toISOString(),
    public_metrics: { retweet_count: 0, reply_count: 0, like_count: 1, quote_count: 0 },
  };
}

async function connectX(auth: Record<string, string>, terms: string[]) {
  const res = await stack.gw.http.put(`${BASE}/x/connection`).set(auth)
    .send({ credentials: { bearer_token: BEARER }, terms, options: { page_size: 10, max_pages: 2 }, base_url: xp.url });
  expect(res.status).toBe(200);
  return res.body;
}

/** Runs a scheduler tick and waits until the connection has been polled after `since`. */
async function pollOnce(connectionId: string, since = new Date(0)) {
  await db().socialConnection.update({ where: { id: connectionId }, data: { nextPollAt: new Date() } });
  xp.requests.length = 0;
  await stack.gw.deps.queues.add(QUEUES.socialPoll, {});
  return waitFor(async () => {
    const c = await db().socialConnection.findUnique({ where: { id: connectionId } });
    return c?.lastPolledAt && c.lastPolledAt > since ? c : null;
  });
}

const searches = () => xp.requests.filter((r) => r.path === "/2/tweets/search/recent");
const termCursor = async (id: string, term: string) =>
  ((await db().socialConnection.findUniqueOrThrow({ where: { id } })).cursor as { terms: Record<string, { since_id?: string }> }).terms[term];

describe("the X stand-in refuses as X does", () => {
  const search = (params: Record<string, string>) =>
    fetch(`${xp.url}/2/tweets/search/recent?${new URLSearchParams({ max_results: "10", ...params })}`, { headers: { authorization: `Bearer ${BEARER}` } });
  const invalidRequest = (parameter: string, value: string, message: RegExp) => ({
    errors: [{ parameters: { [parameter]: [value] }, message: expect.stringMatching(message) }],
    title: "Invalid Request",
    detail: "One or more parameters to your request was invalid.",
    type: "https://api.twitter.com/2/problems/invalid-request",
  });

  test("a since_id from before the 7-day window: 400 naming since_id and the smallest id it would take", async () => {
    const stale = snowflake(Date.now() - 8 * DAY_MS);
    const res = await search({ query: "solar", since_id: stale });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(invalidRequest("since_id", stale,
      /^'since_id' must be a tweet id created after \d{4}-\d\d-\d\dT\d\d:\d\dZ\. Please use a 'since_id' that is larger than \d+$/));
    expect((await search({ query: "solar", since_id: snowflake(Date.now() - 6 * DAY_MS) })).status).toBe(200);
  });

  test.each([
    ["an unclosed quote", '"solar panels', /no viable alternative at character '"'/],
    ["an unknown operator", "foo:bar solar", /Reference to invalid operator 'foo'/],
    ["more than 512 characters", `solar ${"x".repeat(520)}`, /exceeds the maximum of 512 characters/],
  ])("%s: 400 naming query", async (_what, query, message) => {
    const res = await search({ query });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(invalidRequest("query", query, message));
  });

  test("known operators, quoted phrases and colons inside quotes are accepted", async () => {
    for (const query of ['"solar panels" -is:retweet lang:en', 'from:ada "note: solar"', "(solar OR wind) has:links"]) {
      expect((await search({ query })).status).toBe(200);
    }
  });
});

describe("X polling with a since_id older than X's window", () => {
  test("a term quiet for a week is asked from start_time, never with its old since_id; the connection stays active", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, ["solar"]);
    const stale = snowflake(Date.now() - 8 * DAY_MS);
    await db().socialConnection.update({ where: { id: conn.id }, data: { cursor: { terms: { solar: { since_id: stale } } } } });

    // Still nothing new: the search is asked from the window's start; the cursor keeps what was counted.
    let polled = await pollOnce(conn.id);
    expect(polled).toMatchObject({ status: "active", lastError: null });
    expect(polled.nextPollAt).not.toBeNull();
    let sent = searches();
    expect(sent.map((r) => r.status)).toEqual([200]);
    expect(sent[0].query.get("since_id")).toBeNull();
    const startTime = Date.parse(sent[0].query.get("start_time")!);
    expect(startTime).toBeGreaterThanOrEqual(Date.now() - 7 * DAY_MS);
    expect(startTime).toBeLessThanOrEqual(Date.now() - 6 * DAY_MS - 22 * 3_600_000);
    expect(await termCursor(conn.id, "solar")).toEqual({ since_id: stale });

    // A post arrives: read from the window's start, then polling goes on from it with since_id.
    const fresh = post(2, "solar is back");
    xp.setData({ posts: [fresh] });
    polled = await pollOnce(conn.id, polled.lastPolledAt!);
    expect(polled).toMatchObject({ status: "active", lastError: null });
    expect(searches()[0].query.get("since_id")).toBeNull();
    expect((await db().signal.findMany({ where: { accountId: a.accountId, source: "x" } })).map((s) => s.externalId)).toEqual([fresh.id]);
    expect(await termCursor(conn.id, "solar")).toEqual({ since_id: fresh.id });

    polled = await pollOnce(conn.id, polled.lastPolledAt!);
    expect(searches()[0].query.get("since_id")).toBe(fresh.id);
    expect(searches()[0].query.get("start_time")).toBeNull();
  });

  test("a connection left in error by a stale since_id is repaired by a PUT: the next poll reads again", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, ["solar"]);
    const stale = snowflake(Date.now() - 9 * DAY_MS);
    // As a poll that sent the stale since_id left it: X's 400 was a bad_request, so `error` and no next poll.
    await db().socialConnection.update({
      where: { id: conn.id },
      data: {
        status: "error", nextPollAt: null, cursor: { terms: { solar: { since_id: stale } } },
        lastError: "x: recent search: X refused the request (400 'since_id' must be a tweet id created after ...)",
      },
    });
    xp.setData({ posts: [post(3, "solar again")] });

    // PUT keeps the cursor and resets the status; the poll it makes due no longer sends the stale since_id.
    const put = await connectX(a.auth, ["solar"]);
    expect(put).toMatchObject({ status: "active", last_error: null });
    expect(await termCursor(conn.id, "solar")).toEqual({ since_id: stale });
    const polled = await pollOnce(conn.id);
    expect(polled).toMatchObject({ status: "active", lastError: null });
    expect(searches().map((r) => [r.status, r.query.get("since_id")])).toEqual([[200, null]]);
    expect(await db().signal.count({ where: { accountId: a.accountId, source: "x" } })).toBe(1);
  });
});

describe("X polling with a term X refuses", () => {
  test("the refused term fails alone: the other terms are read, the status names the term and why, the connection stays active", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, ["solar", '"solar panels', "foo:bar", "wind"]);
    const solar = post(4, "solar roofs everywhere");
    const wind = post(3, "wind farms offshore");
    xp.setData({ posts: [solar, wind] });

    const polled = await pollOnce(conn.id);
    expect(searches().map((r) => `${r.query.get("query")}:${r.status}`)).toEqual(["solar:200", '"solar panels:400', "foo:bar:400", "wind:200"]);
    expect(polled.status).toBe("active");
    expect(polled.nextPollAt).not.toBeNull();
    const signals = await db().signal.findMany({ where: { accountId: a.accountId, source: "x" } });
    expect(new Set(signals.map((s) => `${s.topic}:${s.externalId}`))).toEqual(new Set([`solar:${solar.id}`, `wind:${wind.id}`]));

    const st = (await stack.gw.http.get(`${BASE}/x/status`).set(a.auth)).body;
    expect(st.status).toBe("active");
    expect(st.last_error).toMatch(/term ""solar panels" skipped: .*400 .*no viable alternative at character '"'/);
    expect(st.last_error).toMatch(/term "foo:bar" skipped: .*400 .*Reference to invalid operator 'foo'/);
    expect(st.last_error).not.toMatch(/"(solar|wind)" skipped/);
  });

  test("every term refused still puts the connection in error", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, ["foo:bar"]);
    const polled = await pollOnce(conn.id);
    expect(polled.status).toBe("error");
    expect(polled.nextPollAt).toBeNull();
    expect(polled.lastError).toMatch(/Reference to invalid operator 'foo'/);
  });
});
