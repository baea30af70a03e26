// Mutes: a muted topic or category pushes nothing (its events are counted on the mute instead), other topics still
// arrive, and deleting the mute lets the next event through. Real gateway, trend-events worker, Postgres, Redis and
// a local webhook receiver; the recurring windows are checked against fixed instants.
import { isMuteActive, mutesHolding, type MuteRule } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

let stack: Stack;
let receiver: Receiver;
beforeAll(async () => { stack = await startStack(); receiver = await startReceiver(); });
afterAll(async () => { await stack.close(); await receiver.close(); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;

async function subscribedAccount() {
  const a = await stack.gw.account();
  const path = `/m${++n}`;
  expect((await stack.gw.http.post("/api/integrations/webhooks").set(a.auth).send(webhookBody(receiver.url(path)))).status).toBe(201);
  return { ...a, path, names: () => receiver.on(path).map((r) => JSON.parse(r.body).trend_name as string) };
}

test("a muted topic pushes nothing and counts each held event; another topic still arrives; unmuting lets the next one through", async () => {
  const a = await subscribedAccount();
  const mute = await stack.gw.http.post("/api/mutes").set(a.auth).send({ topic: "ai AGENTS", duration_minutes: 60, reason: "launch week noise" });
  expect(mute.status).toBe(201);
  expect(mute.body).toMatchObject({ topic: "ai AGENTS", category: null, active_now: true, suppressed: 0, created_by: `key:${a.keyId}` });

  await stack.publish(trendEvent(a.accountId, { trend_name: "AI agents", trend_id: "trend_ai" }));
  await stack.publish(trendEvent(a.accountId, { trend_name: "AI agents", trend_id: "trend_ai" }));
  await stack.publish(trendEvent(a.accountId, { trend_name: "Heat pumps", trend_id: "trend_heat" }));
  await waitFor(async () => a.names().length === 1);
  const counted = await waitFor(async () => {
    const m = (await stack.gw.http.get(`/api/mutes/${mute.body.id}`).set(a.auth)).body;
    return m.suppressed === 2 ? m : null;
  });
  expect(counted.last_suppressed_at).not.toBeNull();
  await sleep(500); // nothing more arrives late
  expect(a.names()).toEqual(["Heat pumps"]);

  expect((await stack.gw.http.delete(`/api/mutes/${mute.body.id}`).set(a.auth)).status).toBe(204);
  await sleep(Number(stack.gw.deps.config.TREND_ROUTING_CACHE_MS) + 100); // the worker's cache of the account's mutes
  await stack.publish(trendEvent(a.accountId, { trend_name: "AI agents", trend_id: "trend_ai" }));
  await waitFor(async () => a.names().includes("AI agents"));
});

test("a category mute holds back its sub-categories, not a sibling; an ended mute holds nothing; another account is unaffected", async () => {
  const a = await subscribedAccount();
  const b = await subscribedAccount();
  expect((await stack.gw.http.post("/api/mutes").set(a.auth).send({ category: "tech" })).status).toBe(201);
  const ended = await stack.gw.http.post("/api/mutes").set(a.auth).send({ category: "finance", duration_minutes: 1 });
  await stack.gw.deps.db.mute.update({ where: { id: ended.body.id }, data: { endsAt: new Date(Date.now() - 1000) } });
  expect((await stack.gw.http.get(`/api/mutes/${ended.body.id}`).set(a.auth)).body.active_now).toBe(false);

  await stack.publish(trendEvent(a.accountId, { trend_name: "Foldables", trend_id: "t1", category: "tech/mobile" }));
  await stack.publish(trendEvent(a.accountId, { trend_name: "Index funds", trend_id: "t2", category: "finance/investing" }));
  await stack.publish(trendEvent(a.accountId, { trend_name: "Techno", trend_id: "t3", category: "technology" }));
  await stack.publish(trendEvent(b.accountId, { trend_name: "Foldables", trend_id: "t1", category: "tech/mobile" }));
  await waitFor(async () => a.names().length === 2 && b.names().length === 1);
  await sleep(500);
  expect(a.names().sort()).toEqual(["Index funds", "Techno"]);
  expect(b.names()).toEqual(["Foldables"]);
});

test("recurring windows: weekend evenings 18:00-22:00 UTC", () => {
  const m: MuteRule = {
    id: "mut_x", topic: null, category: "retail", startsAt: new Date("2026-11-01T00:00:00Z"), endsAt: null,
    rrule: "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18;BYMINUTE=0;BYSECOND=0", windowMinutes: 240, timeZone: "UTC",
  };
  const at = (s: string) => isMuteActive(m, new Date(s));
  expect(at("2026-11-28T18:00:00Z")).toBe(true); // Saturday, the window opens
  expect(at("2026-11-29T21:59:00Z")).toBe(true); // Sunday, inside
  expect(at("2026-11-28T22:00:00Z")).toBe(false); // closed again
  expect(at("2026-11-28T17:59:00Z")).toBe(false);
  expect(at("2026-11-30T19:00:00Z")).toBe(false); // Monday
  expect(at("2026-10-31T19:00:00Z")).toBe(false); // before it starts
  expect(mutesHolding([m], { trend_name: "Black Friday", category: "retail/fashion" }, new Date("2026-11-28T19:00:00Z")).map((x) => x.id)).toEqual(["mut_x"]);
});

test("the docs' rule as written (BYHOUR=18, no minutes) opens at 18:00, whatever minute the mute was created at", () => {
  const m: MuteRule = {
    id: "mut_y", topic: null, category: "retail", startsAt: new Date("2026-11-01T09:37:12Z"), endsAt: null,
    rrule: "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18", windowMinutes: 240, timeZone: "UTC",
  };
  const at = (s: string) => isMuteActive(m, new Date(s));
  expect(at("2026-11-28T18:00:00Z")).toBe(true);
  expect(at("2026-11-28T21:59:59Z")).toBe(true);
  expect(at("2026-11-28T22:00:00Z")).toBe(false); // not 22:37:12
  expect(at("2026-11-28T17:59:59Z")).toBe(false);
});

test("a bad BYDAY is refused in the rule's own terms, not with the library's internals", async () => {
  const a = await stack.gw.account();
  for (const rule of ["FREQ=WEEKLY;BYDAY=XX", "FREQ=WEEKLY;BYDAY=SA,", "FREQ=MONTHLY;BYDAY=0MO", "FREQ=WEEKLY;BYDAY=sa"]) {
    const res = await stack.gw.http.post("/api/mutes").set(a.auth).send({ topic: "x", rrule: rule, window_minutes: 30 });
    expect([rule, res.status, res.body.errors?.map((e: { path: string }) => e.path)]).toEqual([rule, 422, ["rrule"]]);
    expect(JSON.stringify(res.body)).toMatch(/BYDAY must list days as MO, TU|an RFC 5545 RRULE such as/);
    expect(JSON.stringify(res.body)).not.toMatch(/undefined|Cannot read|TypeError|is not a function/);
  }
});

test("a mute is validated field by field", async () => {
  const a = await stack.gw.account();
  const cases: [Record<string, unknown>, string][] = [
    [{ topic: "x", category: "tech" }, "topic"],
    [{}, "topic"],
    [{ topic: "x", duration_minutes: 10, until: new Date(Date.now() + 3600_000).toISOString() }, "until"],
    [{ topic: "x", rrule: "FREQ=DAILY;BYHOUR=9" }, "window_minutes"],
    [{ topic: "x", rrule: "FREQ=DAILY;BYHOUR=99", window_minutes: 30 }, "rrule"],
    [{ topic: "x", rrule: "DTSTART=20260101", window_minutes: 30 }, "rrule"],
    [{ topic: "x", rrule: "FREQ=DAILY;UNTIL=20200101T000000Z", window_minutes: 30 }, "rrule"], // no occurrence left
  ];
  for (const [body, path] of cases) {
    const res = await stack.gw.http.post("/api/mutes").set(a.auth).send(body);
    expect([JSON.stringify(body), res.status, res.body.errors?.map((e: { path: string }) => e.path)]).toEqual([JSON.stringify(body), 422, [path]]);
  }
});
