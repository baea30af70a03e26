import { QUEUES } from "@trendgate/contracts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { waitFor } from "../helpers/config.ts";
import { startYouTubeServer, type YouTubeServer } from "../peers/youtube-server.ts";

// Google counts YouTube quota per Cloud project, not per API key or connection: connections on one project draw on
// one daily budget (100 searches). The stand-in counts per project too and answers 403 quotaExceeded once a bucket
// is overdrawn (which, at Google, is a call charged for nothing); the connector must stop before that, for all of a
// project's connections together.

const BASE = "/api/integrations/social/youtube";
// The stand-in's projects: "default" has KEY and SAME_PROJECT_KEY, "acme" two keys, "other" and "paced" one each.
const KEY = "AIzaSy-project-quota-key";
const SAME_PROJECT_KEY = "AIzaSy-project-quota-key-2";
const ACME_1 = "AIzaSy-acme-key-1";
const ACME_2 = "AIzaSy-acme-key-2";
const OTHER = "AIzaSy-other-project-key";
const PACED = "AIzaSy-paced-project-key";

let stack: Stack;
let yt: YouTubeServer;

beforeAll(async () => {
  yt = await startYouTubeServer({ apiKey: KEY, keys: { [SAME_PROJECT_KEY]: "default", [ACME_1]: "acme", [ACME_2]: "acme", [OTHER]: "other", [PACED]: "paced" } });
  // Two workers, so jobs of different connections really run at the same time; ticks are hourly (polls are asked),
  // and the first one is over (only the next is scheduled) before any connection exists.
  stack = await startStack({ OUTBOUND_ALLOWLIST: "127.0.0.1", SOCIAL_POLL_INTERVAL_SECONDS: "3600", SOCIAL_POLL_TICK_SECONDS: "3600" }, 2);
  const ticks = stack.gw.deps.queues.get(QUEUES.socialPoll);
  await waitFor(async () => {
    const c = await ticks.getJobCounts("waiting", "active", "delayed", "prioritized");
    return c.waiting + c.active + c.prioritized === 0 && c.delayed > 0;
  });
});
afterAll(async () => {
  await stack?.close();
  await yt?.close();
});
beforeEach(() => { yt.requests.length = 0; yt.setVideos([]); });

const terms = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} term ${i}`);
const searches = () => yt.on("/youtube/v3/search").length;
const overdrawn = () => yt.requests.filter((r) => r.status === 403).length;
const status = async (auth: Record<string, string>) => (await stack.gw.http.get(`${BASE}/status`).set(auth)).body;

async function connect(apiKey: string, n: number, options: Record<string, unknown> = {}) {
  const a = await stack.gw.account();
  const res = await stack.gw.http.put(`${BASE}/connection`).set(a.auth).send({ credentials: { api_key: apiKey }, terms: terms(n, a.accountId), options, base_url: yt.baseUrl });
  expect(res.status).toBe(200);
  expect(JSON.stringify(res.body)).not.toContain(apiKey);
  // Polled only when the test asks (a PUT makes the connection due at the scheduler's next tick).
  await stack.gw.deps.db.socialConnection.update({ where: { id: res.body.id }, data: { nextPollAt: null } });
  return { ...a, connection: res.body };
}

/** "Poll now", then the finished action. */
async function pollNow(auth: Record<string, string>) {
  const res = await stack.gw.http.post(`${BASE}/poll`).set(auth);
  expect(res.status).toBe(202);
  return waitFor(async () => (await status(auth)).actions.find((x: any) => x.id === res.body.id && x.status !== "queued"), { timeoutMs: 20_000 });
}

test("two connections on one project share one daily budget: the second stops when it is spent, without calling YouTube", async () => {
  const first = await connect(KEY, 50);
  const second = await connect(KEY, 30);
  // The same key: the same project, named by a digest of the key (Google does not say which project a key is in).
  expect(first.connection.quota_project).toMatch(/^key:[0-9a-f]{16}$/);
  expect(second.connection.quota_project).toBe(first.connection.quota_project);
  expect((await status(second.auth)).quota_project).toBe(first.connection.quota_project);

  expect(await pollNow(first.auth)).toMatchObject({ status: "succeeded" });
  expect(await pollNow(second.auth)).toMatchObject({ status: "succeeded" });
  expect(searches()).toBe(80);
  expect((await status(second.auth)).quota.ledger.spent.search).toBe(80); // the project's count, not its own 30

  // 20 searches are left for the project: the first connection uses them, then stops before its 21st term.
  expect(await pollNow(first.auth)).toMatchObject({ status: "failed" });
  let st = await status(first.auth);
  expect(st).toMatchObject({ status: "quota_exhausted", quota: { ledger: { spent: { search: 100 } } } });
  expect(st.last_error).toMatch(/only 0 of the 100 daily "search" units are left/);
  expect(searches()).toBe(100);

  // The second connection, still active, is refused locally as well.
  expect(await pollNow(second.auth)).toMatchObject({ status: "failed" });
  st = await status(second.auth);
  expect(st.status).toBe("quota_exhausted");
  expect(Date.parse(st.next_poll_at)).toBeGreaterThan(Date.now()); // midnight Pacific
  expect(searches()).toBe(100);
  expect(overdrawn()).toBe(0); // never one call past the project's budget
});

test("keys of one project share its budget when the connections name the project; another project keeps its own", async () => {
  const a = await connect(ACME_1, 50, { project: "acme-marketing" });
  const b = await connect(ACME_2, 50, { project: "acme-marketing" });
  const other = await connect(OTHER, 50);
  expect([a.connection.quota_project, b.connection.quota_project]).toEqual(["project:acme-marketing", "project:acme-marketing"]);
  expect(a.connection.options).toMatchObject({ project: "acme-marketing" });
  expect(other.connection.quota_project).toMatch(/^key:/);
  expect(other.connection.quota_project).not.toBe(a.connection.quota_project);

  // acme: 50 + 50 searches spend the day; a third poll is refused without a call.
  expect(await pollNow(a.auth)).toMatchObject({ status: "succeeded" });
  expect(await pollNow(b.auth)).toMatchObject({ status: "succeeded" });
  expect(await pollNow(a.auth)).toMatchObject({ status: "failed" });
  expect((await status(a.auth)).status).toBe("quota_exhausted");
  expect(searches()).toBe(100);

  // "other" still has its whole day: two polls of 50.
  expect(await pollNow(other.auth)).toMatchObject({ status: "succeeded" });
  expect(await pollNow(other.auth)).toMatchObject({ status: "succeeded" });
  expect((await status(other.auth))).toMatchObject({ status: "active", quota: { ledger: { spent: { search: 100 } } } });
  expect(searches()).toBe(200);
  expect(overdrawn()).toBe(0);

  // A project name that is not a Cloud project id or number is refused.
  const bad = await stack.gw.account();
  const res = await stack.gw.http.put(`${BASE}/connection`).set(bad.auth).send({ credentials: { api_key: OTHER }, terms: ["x"], options: { project: "key:0123456789abcdef" }, base_url: yt.baseUrl });
  expect(res.status).toBe(422);
});

test("connections of one project polled at the same time spend its budget exactly once", async () => {
  const conns = [await connect(SAME_PROJECT_KEY, 50, { project: "shared-at-once" }), await connect(SAME_PROJECT_KEY, 50, { project: "shared-at-once" }), await connect(SAME_PROJECT_KEY, 50, { project: "shared-at-once" })];
  yt.resetQuota(); // "default" was spent by the first test
  const done = await Promise.all(conns.map((c) => pollNow(c.auth)));
  expect(done.map((d: any) => d.status).sort()).toEqual(["failed", "succeeded", "succeeded"]);
  expect(searches()).toBe(100);
  expect(overdrawn()).toBe(0);
});

test("polls are paced over the terms of every connection on the project", async () => {
  const first = await connect(PACED, 10);
  const second = await connect(PACED, 10);
  await pollNow(first.auth);
  await pollNow(second.auth);
  const row = await stack.gw.deps.db.socialConnection.findUniqueOrThrow({ where: { id: second.connection.id } });
  const st = await status(second.auth);
  expect(st.quota.last.search.remaining).toBe(80);
  // 80 searches left for 20 terms: 4 more polls of each connection until midnight Pacific (not 8 each).
  const untilReset = Date.parse(st.quota.last.search.reset_at) - row.lastPolledAt!.getTime();
  const gap = row.nextPollAt!.getTime() - row.lastPolledAt!.getTime();
  expect(Math.abs(gap - Math.max(untilReset / 4, 3_600_000))).toBeLessThan(2000);
});
