// The public interactivity endpoint Slack calls when a card's button is pressed: only correctly signed, fresh requests
// change anything; a stale card (the item changed meanwhile) changes nothing and gets its card refreshed.
import { waitFor } from "../helpers/config.ts";
import { startGateway } from "../helpers/gateway.ts";
import { seedTrendRow } from "../helpers/trend-row.ts";
import type { Stack } from "../helpers/stack.ts";
import type { SlackServer } from "../peers/slack-server.ts";
import { chatMessagesOf, connectedAccount, event, INTERACTIVITY, item, posted, pressButton, publishAndWait, SIGNING_SECRET, useChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
let n = 0;
useChatStack((c) => ({ slack, stack } = c));

/** An account whose item has a posted card; returns what a press needs. */
async function cardFor() {
  const a = await connectedAccount(stack, slack, { id: `C0INTER${String(++n).padStart(4, "0")}`, name: `ops-${n}` });
  const it = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId))).id);
  const press = (action: string, user?: { id: string; username?: string }) => slack.blockActionsBody(a.channelId, it.chat.message_ts, `operator:${action}`, user);
  return { a, it, ts: it.chat.message_ts as string, press };
}

test("a signed press acknowledges the item as that Slack user and the card is updated", async () => {
  const { a, it, ts, press } = await cardFor();
  const res = await pressButton(stack.gw, press("acknowledge", { id: "U0OPERATOR1", username: "ada" }));
  expect(res.status).toBe(200);
  const after = await item(stack.gw, a, it.id);
  expect(after).toMatchObject({ state: "acknowledged", version: 2, acknowledged_by: `chat:${slack.team.id}/U0OPERATOR1` });
  expect(after.history.at(-1)).toMatchObject({ action: "acknowledge", actor: `chat:${slack.team.id}/U0OPERATOR1`, data: { actor_name: "ada" } });
  await waitFor(async () => slack.message(a.channelId, ts)!.edits.length === 1);
  expect(JSON.stringify(slack.message(a.channelId, ts)!.blocks)).toContain("acknowledged by ada");
});

test("the Snooze button snoozes for the card's minutes", async () => {
  const { a, it, press } = await cardFor();
  const before = Date.now();
  expect((await pressButton(stack.gw, press("snooze"))).status).toBe(200);
  const after = await item(stack.gw, a, it.id);
  expect(after.state).toBe("snoozed");
  expect(Date.parse(after.snoozed_until) - before).toBeGreaterThanOrEqual(59 * 60_000);
});

test("the Mute button resolves the item and mutes its topic for 24 h: the topic's next event makes no card", async () => {
  const { a, it, ts, press } = await cardFor();
  const before = Date.now();
  expect((await pressButton(stack.gw, press("mute", { id: "U0OPERATOR2", username: "grace" }))).status).toBe(200);
  const after = await item(stack.gw, a, it.id);
  expect(after).toMatchObject({ state: "resolved", resolved_by: `chat:${slack.team.id}/U0OPERATOR2` });
  expect(after.history.at(-1)).toMatchObject({ action: "mute", data: { mute_minutes: 1440, actor_name: "grace" } });
  const [mute] = (await stack.gw.http.get("/api/mutes").set(a.auth)).body.data;
  expect(mute).toMatchObject({ topic: it.title, active_now: true, created_by: `chat:${slack.team.id}/U0OPERATOR2` });
  expect(Date.parse(mute.ends_at) - before).toBeGreaterThanOrEqual(24 * 3600_000 - 60_000);
  await waitFor(async () => slack.message(a.channelId, ts)!.edits.length === 1); // the card shows it resolved

  // The topic fires again: held back (counted on the mute), so the resolved item is not reopened and nothing is posted.
  await new Promise((r) => setTimeout(r, Number(stack.gw.deps.config.TREND_ROUTING_CACHE_MS) + 100));
  const posts = slack.messages(a.channelId).length;
  await stack.publish(event(a.accountId, { trend_name: it.title, severity: "critical" }));
  await waitFor(async () => (await stack.gw.http.get(`/api/mutes/${mute.id}`).set(a.auth)).body.suppressed === 1);
  expect((await item(stack.gw, a, it.id)).state).toBe("resolved");
  expect(slack.messages(a.channelId)).toHaveLength(posts);
});

test("Not a trend on a card records the presser's verdict on the item's trend and raises its topic's bar; the item is unchanged", async () => {
  const a = await connectedAccount(stack, slack, { id: `C0INTER${String(++n).padStart(4, "0")}`, name: `ops-${n}` });
  const trend = await seedTrendRow(stack.gw.deps.db, a.accountId, "Card topic");
  const now = trend.detectedAt;
  const it = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { trend_id: trend.id, trend_name: trend.name }))).id);

  const res = await pressButton(stack.gw, slack.blockActionsBody(a.channelId, it.chat.message_ts, "feedback:not_a_trend", { id: "U0OPERATOR3", username: "lin" }));
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ response_type: "ephemeral", replace_original: false });
  expect(res.body.text).toContain('"Card topic" marked not a trend. It now needs 1.1x the usual evidence');
  const feedback = (await stack.gw.http.get(`/api/trends/${trend.id}/feedback`).set(a.auth)).body;
  expect(feedback).toMatchObject({ data: [{ verdict: "not_a_trend", actor: `chat:${slack.team.id}/U0OPERATOR3`, detected_at: now.toISOString() }], evidence_bar: 1.1 });
  expect(await item(stack.gw, a, it.id)).toMatchObject({ state: "open", version: it.version });

  // Useful from the same person replaces the verdict.
  const useful = await pressButton(stack.gw, slack.blockActionsBody(a.channelId, it.chat.message_ts, "feedback:useful", { id: "U0OPERATOR3" }));
  expect(useful.body.text).toContain("marked useful. It alerts at the usual evidence.");
  expect((await stack.gw.http.get(`/api/trends/${trend.id}/feedback`).set(a.auth)).body).toMatchObject({ data: [{ verdict: "useful" }], evidence_bar: 1 });
});

test("forged, tampered or stale requests are refused with 401 and change nothing", async () => {
  const { a, it, press } = await cardFor();
  const body = press("resolve");
  const forged = await pressButton(stack.gw, body, { secret: "not-the-signing-secret" });
  const stale = await pressButton(stack.gw, body, { at: new Date(Date.now() - 6 * 60_000) });
  const future = await pressButton(stack.gw, body, { at: new Date(Date.now() + 6 * 60_000) });
  const unsigned = await stack.gw.http.post(INTERACTIVITY).set("content-type", "application/x-www-form-urlencoded").send(body);
  for (const r of [forged, stale, future, unsigned]) {
    expect(r.status).toBe(401);
    expect(r.headers["content-type"]).toMatch(/application\/problem\+json/);
    expect(r.body.code).toBe("unauthorized");
  }
  expect(await item(stack.gw, a, it.id)).toMatchObject({ state: "open", version: 1, history: [{ action: "opened" }] });
  expect(slack.calls("chat.update").filter((c) => c.params.channel === a.channelId)).toHaveLength(0);
  // The same body, correctly signed now, is accepted: only the signature was wrong.
  expect((await pressButton(stack.gw, body)).status).toBe(200);
  expect((await item(stack.gw, a, it.id)).state).toBe("resolved");
});

test("a body changed after signing is refused", async () => {
  const { a, it, press } = await cardFor();
  const body = press("acknowledge");
  const { signSlackRequest } = await import("../../packages/connectors/chat/src/slack/interactions.ts");
  const headers = signSlackRequest(body, SIGNING_SECRET);
  const swapped = body.replace(encodeURIComponent("operator:acknowledge"), encodeURIComponent("operator:resolve"));
  expect(swapped).not.toBe(body);
  const res = await stack.gw.http.post(INTERACTIVITY).set(headers).set("content-type", "application/x-www-form-urlencoded").send(swapped);
  expect(res.status).toBe(401);
  expect(await item(stack.gw, a, it.id)).toMatchObject({ state: "open", version: 1 });
});

test("a press on a stale card changes nothing, answers an ephemeral note and refreshes the card", async () => {
  const { a, it, ts, press } = await cardFor();
  const oldCard = press("acknowledge"); // the card as it was: version 1
  expect((await stack.gw.http.post(`/api/operator/items/${it.id}/actions`).set(a.auth).send({ action: "resolve", version: 1 })).status).toBe(200);
  await waitFor(async () => slack.message(a.channelId, ts)!.edits.length === 1);

  const res = await pressButton(stack.gw, oldCard);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ response_type: "ephemeral", replace_original: false, text: expect.stringContaining("changed meanwhile") });
  expect(await item(stack.gw, a, it.id)).toMatchObject({ state: "resolved", version: 2 });
  await waitFor(async () => slack.message(a.channelId, ts)!.edits.length === 2); // refreshed again
  expect(JSON.stringify(slack.message(a.channelId, ts)!.blocks)).toContain("Resolved");
  expect((await chatMessagesOf(stack.gw, it.id)).map((m) => (m.payload as any).type)).toEqual(["post_item", "update_item", "update_item"]);
});

test("a press from another workspace, or for an unknown item, changes nothing", async () => {
  const { a, it, press } = await cardFor();
  const otherTeam = press("acknowledge").replaceAll(encodeURIComponent(slack.team.id), encodeURIComponent("T0OTHER0001"));
  const r1 = await pressButton(stack.gw, otherTeam);
  expect(r1.status).toBe(200);
  expect(r1.body.text).toMatch(/not available/);
  const unknown = press("acknowledge").replaceAll(encodeURIComponent(it.id), encodeURIComponent("opi_01kaq3m2b4c5d6e7f8g9h0jkmn"));
  expect((await pressButton(stack.gw, unknown)).body.text).toMatch(/not available/);
  expect(await item(stack.gw, a, it.id)).toMatchObject({ state: "open", version: 1 });
  // Other interaction types are acknowledged and ignored.
  const other = new URLSearchParams({ payload: JSON.stringify({ type: "view_submission", team: { id: slack.team.id } }) }).toString();
  expect((await pressButton(stack.gw, other)).status).toBe(200);
});

test("without a configured signing secret the endpoint answers 501 provider_not_configured", async () => {
  const gw = await startGateway({ SLACK_SIGNING_SECRET: "" });
  try {
    const res = await pressButton(gw, "payload=%7B%7D");
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ code: "provider_not_configured", detail: expect.stringContaining("SLACK_SIGNING_SECRET") });
  } finally {
    await gw.close();
  }
});
