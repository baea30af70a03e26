// The operator queue over REST: trend events become items (per the account's chat settings), and operators act on
// them through the state machine with a version check; every change is kept in the item's history.
import { QUEUES } from "@trendgate/contracts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import type { Stack } from "../helpers/stack.ts";
import { connectChat, event, eventsDrained, item, items, publishAndWait, startChatStack, type Account } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
beforeAll(async () => {
  slack = await startSlackServer();
  stack = await startChatStack(slack);
});
afterAll(async () => { await stack.close(); await slack.close(); });
afterEach(() => slack.assertConforming());

const act = (a: Account, id: string, body: Record<string, unknown>) => stack.gw.http.post(`/api/operator/items/${id}/actions`).set(a.auth).send(body);

/** A connected account (no channel saved: nothing is posted, items are still kept). */
async function account(settings?: Record<string, unknown>) {
  const a = await stack.gw.account();
  await connectChat(stack.gw, a);
  if (settings) expect((await stack.gw.http.put("/api/integrations/chat/settings").set(a.auth).send(settings)).status).toBe(200);
  return a;
}

describe("intake", () => {
  test("a high trend event opens one item per trend; a repeat updates it and counts an occurrence, once per event", async () => {
    const a = await account();
    const e1 = event(a.accountId, { severity: "high", velocity: 120 });
    const it = await publishAndWait(stack, a, e1);
    expect(it).toMatchObject({
      state: "open", severity: "high", title: e1.trend_name, category: "tech/ai", velocity: 120, occurrences: 1, version: 1,
      briefing_url: e1.source_link, trend_id: e1.trend_id, acknowledged_by: null, chat: { channel_id: null, message_ts: null, delivery_error: null },
    });
    expect(it.history.map((h: any) => [h.action, h.from_state, h.to_state, h.actor])).toEqual([["opened", null, "open", "system"]]);

    const e2 = { ...e1, id: `${e1.id}-2`, severity: "critical" as const, velocity: 300 };
    const again = await publishAndWait(stack, a, e2);
    expect(again).toMatchObject({ id: it.id, severity: "critical", velocity: 300, occurrences: 2, version: 1, state: "open" });
    // The same event's batch run again (a retried or re-queued job) changes nothing.
    await stack.gw.deps.queues.add(QUEUES.trendEvents, { events: [e2] }, { jobId: `rerun-${e2.id}` });
    await eventsDrained(stack);
    expect((await item(stack.gw, a, it.id)).occurrences).toBe(2);
    expect((await items(stack.gw, a)).data).toHaveLength(1);
  });

  test("events below min_severity or outside the categories make no item; an account without chat gets none", async () => {
    const a = await account({ min_severity: "critical", categories: ["finance"] });
    await stack.publish(event(a.accountId, { severity: "high", category: "finance/crypto" }));
    await stack.publish(event(a.accountId, { severity: "critical", category: "tech/ai" }));
    await stack.publish(event(a.accountId, { severity: "critical", category: "financexyz" })); // a prefix only at a "/" boundary
    const hit = await publishAndWait(stack, a, event(a.accountId, { severity: "critical", category: "finance/crypto" }));
    await eventsDrained(stack);
    expect((await items(stack.gw, a)).data.map((i: any) => i.id)).toEqual([hit.id]);

    const noChat = await stack.gw.account();
    await stack.publish(event(noChat.accountId, { severity: "critical" }));
    await eventsDrained(stack);
    expect((await items(stack.gw, noChat)).data).toEqual([]);
  });

  test("a resolved item is reopened by a new event of its trend", async () => {
    const a = await account();
    const e1 = event(a.accountId);
    const it = await publishAndWait(stack, a, e1);
    expect((await act(a, it.id, { action: "resolve", version: 1 })).status).toBe(200);
    const back = await publishAndWait(stack, a, { ...e1, id: `${e1.id}-again` });
    expect(back).toMatchObject({ state: "open", version: 3, occurrences: 2, resolved_by: null });
    expect(back.history.map((h: any) => [h.action, h.actor])).toEqual([["opened", "system"], ["resolve", `key:${a.keyId}`], ["reopen", "system"]]);
  });
});

describe("actions", () => {
  test("acknowledge -> resolve -> reopen with the version seen; a stale version is a 409 and changes nothing", async () => {
    const a = await account();
    const it = await publishAndWait(stack, a, event(a.accountId));

    const ack = await act(a, it.id, { action: "acknowledge", version: 1, note: "on it" });
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({ state: "acknowledged", version: 2, acknowledged_by: `key:${a.keyId}` });
    expect(Date.parse(ack.body.acknowledged_at)).toBeGreaterThan(0);

    // Another operator, still looking at version 1.
    const stale = await act(a, it.id, { action: "resolve", version: 1 });
    expect(stale.status).toBe(409);
    expect(stale.headers["content-type"]).toMatch(/application\/problem\+json/);
    expect(stale.body).toMatchObject({ code: "version_conflict", errors: [{ location: "body", path: "version", message: "current version is 2" }] });
    expect(await item(stack.gw, a, it.id)).toMatchObject({ state: "acknowledged", version: 2 });

    // Not allowed from the current state: 422, nothing changes.
    const twice = await act(a, it.id, { action: "acknowledge", version: 2 });
    expect(twice.status).toBe(422);
    expect(twice.body).toMatchObject({ code: "invalid_transition", errors: [{ path: "action" }] });

    expect((await act(a, it.id, { action: "resolve", version: 2 })).body).toMatchObject({ state: "resolved", version: 3, resolved_by: `key:${a.keyId}`, acknowledged_by: `key:${a.keyId}` });
    expect((await act(a, it.id, { action: "reopen", version: 3 })).body).toMatchObject({ state: "open", version: 4, acknowledged_by: null, resolved_by: null });

    const full = await item(stack.gw, a, it.id);
    expect(full.history.map((h: any) => [h.action, h.from_state, h.to_state, h.version])).toEqual([
      ["opened", null, "open", 1], ["acknowledge", "open", "acknowledged", 2], ["resolve", "acknowledged", "resolved", 3], ["reopen", "resolved", "open", 4],
    ]);
    expect(full.history[1]).toMatchObject({ actor: `key:${a.keyId}`, data: { note: "on it" } });
  });

  test("two operators acting on the same version at once: exactly one wins", async () => {
    const a = await account();
    const it = await publishAndWait(stack, a, event(a.accountId));
    const answers = await Promise.all([
      act(a, it.id, { action: "acknowledge", version: 1 }), act(a, it.id, { action: "resolve", version: 1 }), act(a, it.id, { action: "snooze", version: 1 }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const after = await item(stack.gw, a, it.id);
    expect(after.version).toBe(2);
    expect(after.history).toHaveLength(2);
  });

  test("snooze: 60 minutes by default, 5..10080 accepted, the rest refused", async () => {
    const a = await account();
    const it = await publishAndWait(stack, a, event(a.accountId));
    const before = Date.now();
    const s = await act(a, it.id, { action: "snooze", version: 1 });
    expect(s.body.state).toBe("snoozed");
    expect(Date.parse(s.body.snoozed_until) - before).toBeGreaterThanOrEqual(60 * 60_000 - 1000);
    expect(Date.parse(s.body.snoozed_until) - before).toBeLessThanOrEqual(60 * 60_000 + 60_000);
    for (const snooze_minutes of [4, 10081, 1.5]) {
      const bad = await act(a, it.id, { action: "snooze", version: 2, snooze_minutes });
      expect(bad.status).toBe(422);
      expect(bad.body.errors[0].path).toBe("snooze_minutes");
    }
    expect((await act(a, it.id, { action: "snooze", version: 2, snooze_minutes: 5 })).body).toMatchObject({ state: "snoozed", version: 3 });
    expect((await act(a, it.id, { action: "wake", version: 3 })).status).toBe(422);
    expect((await act(a, it.id, { action: "reopen" })).status).toBe(422); // version is required
  });

  test("another account's item is a 404, to read and to act on", async () => {
    const a = await account();
    const it = await publishAndWait(stack, a, event(a.accountId));
    const b = await stack.gw.account();
    expect((await stack.gw.http.get(`/api/operator/items/${it.id}`).set(b.auth)).status).toBe(404);
    expect((await act(b, it.id, { action: "acknowledge", version: 1 })).status).toBe(404);
    expect((await item(stack.gw, a, it.id)).state).toBe("open");
  });
});

test("listing: filters by state and severity, newest first, paged with next_cursor", async () => {
  const a = await account({ min_severity: "medium" });
  const one = await publishAndWait(stack, a, event(a.accountId, { severity: "medium" }));
  const two = await publishAndWait(stack, a, event(a.accountId, { severity: "high" }));
  const three = await publishAndWait(stack, a, event(a.accountId, { severity: "critical" }));
  await act(a, two.id, { action: "acknowledge", version: 1 });

  expect((await items(stack.gw, a)).data.map((i: any) => i.id)).toEqual([three.id, two.id, one.id]);
  expect((await items(stack.gw, a, "?state=open")).data.map((i: any) => i.id)).toEqual([three.id, one.id]);
  expect((await items(stack.gw, a, "?state=acknowledged,resolved")).data.map((i: any) => i.id)).toEqual([two.id]);
  expect((await items(stack.gw, a, "?severity=critical,medium&state=open")).data.map((i: any) => i.id)).toEqual([three.id, one.id]);

  const p1 = await items(stack.gw, a, "?limit=2");
  const p2 = await items(stack.gw, a, `?limit=2&cursor=${p1.next_cursor}`);
  expect([...p1.data, ...p2.data].map((i: any) => i.id)).toEqual([three.id, two.id, one.id]);
  expect(p2.next_cursor).toBeNull();

  const bad = await stack.gw.http.get("/api/operator/items?state=done&severity=extreme").set(a.auth);
  expect(bad.status).toBe(422);
  expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["severity", "state"]);
});
