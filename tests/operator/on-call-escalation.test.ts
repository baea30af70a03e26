// On-call schedules end to end, against the Slack and Teams stand-ins: an item escalates through a notify_on_call
// step that mentions whoever is on call in its schedule, the rotation hands off (at a local time in the schedule's
// zone, just ahead of now), and the same step, run again by the chain's repeat, mentions the next member, each in
// its provider's own mention format. Also the schedules API: CRUD, who is on call at an instant, and its refusals.
import { toWallTime } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import type { SlackServer } from "../peers/slack-server.ts";
import type { TeamsServer } from "../peers/teams-server.ts";
import { connectedAccount, event, item, posted, publishAndWait, teamsAccount, useChatStacks } from "./helpers.ts";

let slack: SlackServer;
let ms: TeamsServer;
let stack: Stack;
useChatStacks((c) => ({ slack, ms, stack } = c));
afterEach(() => slack.assertConforming());

const SCHEDULES = "/api/operator/schedules";
const ZONE = "Asia/Kolkata"; // +05:30: a hand-off read as UTC, or on the hour, would be off
const member = (name: string, slackId: string, teamsId: string) =>
  ({ name, chat_users: [{ provider: "slack", user_id: slackId }, { provider: "teams", user_id: teamsId }] });
const ADA = member("Ada", "U0ADA00001", "aad-ada-0001");
const BO = member("Bo", "U0BO000001", "aad-bo-00001");
const rotation = (over: object = {}) => ({ members: [ADA, BO], shift: "daily", handoff_time: "09:00", start_date: "2026-01-01", ...over });
const createSchedule = (a: { auth: any }, body: object) => stack.gw.http.post(SCHEDULES).set(a.auth).send(body);
const putRoutes = (a: { auth: any }, body: object) => stack.gw.http.put("/api/operator/routes").set(a.auth).send(body);

/**
 * A daily rotation of Ada then Bo whose hand-off to Bo is the first whole minute at least 30 s from now (in ZONE's
 * local time): Ada's shift started yesterday at that time.
 */
function handingOffSoon() {
  const at = new Date(Math.ceil((Date.now() + 30_000) / 60_000) * 60_000);
  const wall = toWallTime(at, ZONE);
  const yesterday = new Date(wall.getTime() - 86_400_000).toISOString().slice(0, 10);
  return { at, rotation: rotation({ handoff_time: wall.toISOString().slice(11, 16), start_date: yesterday }) };
}

/** The replies under an item's card, as `[who it mentions, text]`, in each provider's own format. */
const REPLIES: Record<string, (it: any) => { mentioned: string[]; text: string }[]> = {
  slack: (it) => slack.messages(it.chat.channel_id).filter((m) => m.threadTs === it.chat.message_ts)
    .map((m) => ({ mentioned: [...m.text.matchAll(/<@([A-Z0-9]+)>/g)].map((x) => x[1]), text: m.text })),
  teams: (it) => (ms.threads.get(it.chat.channel_id)?.replies ?? [])
    .map((r) => ({ mentioned: (r.activity.entities ?? []).filter((e: any) => e.type === "mention").map((e: any) => e.mentioned.id), text: r.activity.text })),
};

async function handOffScenario(provider: "slack" | "teams") {
  const a = provider === "slack" ? await connectedAccount(stack, slack, { id: "C0ONCALL001", name: "oncall" }) : await teamsAccount(stack, ms, "On call");
  const soon = handingOffSoon();
  const schedule = await createSchedule(a, { name: "Primary", time_zone: ZONE, rotation: soon.rotation });
  expect(schedule.status).toBe(201);
  expect(schedule.body.on_call_now).toMatchObject({ on_call: ADA, source: "rotation", next_handoff: { at: soon.at.toISOString(), on_call: BO } });
  // The step, then a wait that ends after the hand-off, then the chain once more: the same step runs again.
  const waitMinutes = Math.ceil((soon.at.getTime() - Date.now() + 5_000) / 600) / 100;
  const saved = await putRoutes(a, { routes: [], default_escalation: [
    { type: "notify_on_call", schedule_id: schedule.body.id }, { type: "wait", minutes: waitMinutes }, { type: "repeat", times: 1 },
  ] });
  expect(saved.status).toBe(200);

  const it = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { severity: "critical", trend_name: `Outage ${provider}` }))).id);
  expect(it.chat.provider).toBe(provider);
  const replies = () => REPLIES[provider](it);
  const busy = { timeoutMs: 150_000, everyMs: 200 };
  await waitFor(async () => replies().length >= 1, busy);
  expect(Date.now()).toBeLessThan(soon.at.getTime()); // the first reply came before the hand-off
  expect(replies()[0].mentioned).toEqual([provider === "slack" ? "U0ADA00001" : "aad-ada-0001"]);
  expect(replies()[0].text).toContain(provider === "slack" ? "<@U0ADA00001> This item is still open" : "<at>Ada</at>");

  await waitFor(async () => replies().length >= 2, busy);
  expect(replies()[1].mentioned).toEqual([provider === "slack" ? "U0BO000001" : "aad-bo-00001"]);
  if (provider === "teams") expect(replies()[1].text).toContain("<at>Bo</at>");
  const steps = (await item(stack.gw, a, it.id)).history.filter((h: any) => h.action === "escalated" && h.data.type === "notify_on_call");
  expect(steps.map((h: any) => [h.data.on_call, h.data.replied, h.data.schedule_id])).toEqual([["Ada", true, schedule.body.id], ["Bo", true, schedule.body.id]]);
}

test("a schedule's hand-off changes whom the same notify_on_call step mentions, on Slack and on Teams", async () => {
  await Promise.all([handOffScenario("slack"), handOffScenario("teams")]);
}, 200_000);

test("schedules: created, read, replaced, asked who is on call at an instant, deleted once no step names them", async () => {
  const a = await stack.gw.account();
  const created = await createSchedule(a, {
    name: "Weekend", time_zone: "europe/berlin", rotation: rotation({ start_date: "2026-10-20" }),
    overrides: [{ starts_at: "2026-10-25T12:00:00Z", ends_at: "2026-10-25T18:00:00Z", member: member("Cy", "U0CY000001", "aad-cy-00001") }],
  });
  expect(created.status).toBe(201);
  expect(created.headers.location).toBe(`${SCHEDULES}/${created.body.id}`);
  expect(created.body).toMatchObject({ id: expect.stringMatching(/^sch_/), name: "Weekend", time_zone: "Europe/Berlin", overrides: [expect.objectContaining({ member: expect.objectContaining({ name: "Cy" }) })] });
  const id = created.body.id;

  // Sunday 25 Oct, Berlin's clocks go back: Saturday's member (20 Ada, 21 Bo, ... 24 Ada) stays until 09:00 CET = 08:00Z.
  const at = (iso: string) => stack.gw.http.get(`${SCHEDULES}/${id}/on-call`).query({ at: iso }).set(a.auth);
  expect((await at("2026-10-25T07:30:00Z")).body).toEqual({
    at: "2026-10-25T07:30:00.000Z", on_call: ADA, source: "rotation",
    shift: { index: 4, started_at: "2026-10-24T07:00:00.000Z", ends_at: "2026-10-25T08:00:00.000Z" },
    next_handoff: { at: "2026-10-25T08:00:00.000Z", on_call: BO },
  });
  expect((await at("2026-10-25T13:00:00Z")).body).toMatchObject({ on_call: { name: "Cy" }, source: "override", next_handoff: { at: "2026-10-25T18:00:00.000Z", on_call: BO } });
  expect((await at("2026-10-19T00:00:00Z")).body).toMatchObject({ on_call: null, source: null, shift: null });

  const replaced = await stack.gw.http.put(`${SCHEDULES}/${id}`).set(a.auth).send({ name: "Weekdays", rotation: rotation({ members: [BO] }) });
  expect(replaced.status).toBe(200);
  expect(replaced.body).toMatchObject({ name: "Weekdays", time_zone: "UTC", overrides: [], on_call_now: { on_call: BO, next_handoff: null } });
  const list = await stack.gw.http.get(SCHEDULES).set(a.auth);
  expect(list.body.data.map((s: any) => [s.id, s.name, s.on_call_now.on_call.name])).toEqual([[id, "Weekdays", "Bo"]]);

  // Another account sees none of it.
  const other = await stack.gw.account();
  expect((await stack.gw.http.get(`${SCHEDULES}/${id}`).set(other.auth)).status).toBe(404);
  expect((await stack.gw.http.get(`${SCHEDULES}/${id}/on-call`).set(other.auth)).status).toBe(404);

  // A schedule an escalation step notifies is not deleted; after the step goes, it is.
  expect((await putRoutes(a, { routes: [], default_escalation: [{ type: "notify_on_call", schedule_id: id }] })).status).toBe(200);
  const refused = await stack.gw.http.delete(`${SCHEDULES}/${id}`).set(a.auth);
  expect(refused.status).toBe(409);
  expect(refused.body.detail).toContain("the default route");
  expect((await putRoutes(a, { routes: [], default_escalation: [] })).status).toBe(200);
  expect((await stack.gw.http.delete(`${SCHEDULES}/${id}`).set(a.auth)).status).toBe(204);
  expect((await stack.gw.http.get(`${SCHEDULES}/${id}`).set(a.auth)).status).toBe(404);
});

test("bad schedules and steps naming no schedule of the account are refused with 422 naming the field", async () => {
  const a = await stack.gw.account();
  const fields = (r: any) => r.body.errors.map((e: any) => [e.path, e.code]);
  const badZone = await createSchedule(a, { name: "X", time_zone: "Mars/Olympus", rotation: rotation() });
  expect(badZone.status).toBe(422);
  expect(fields(badZone)).toEqual([["time_zone", "custom"]]);
  expect(badZone.body.errors[0].message).toMatch(/IANA time zone/);

  const bad = await createSchedule(a, {
    name: "X", rotation: rotation({ handoff_time: "24:00", shift: "hours" }),
    overrides: [{ starts_at: "2026-10-25T18:00:00Z", ends_at: "2026-10-25T12:00:00Z", member: ADA }],
  });
  expect(bad.status).toBe(422);
  expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["overrides.0.ends_at", "rotation.handoff_time", "rotation.shift_hours"]);

  const unknownProvider = await createSchedule(a, { name: "X", rotation: rotation({ members: [{ name: "Di", chat_users: [{ provider: "discord", user_id: "42" }] }] }) });
  expect(unknownProvider.status).toBe(422);
  expect(fields(unknownProvider)).toEqual([["rotation.members.0.chat_users.0.provider", "invalid_value"]]);

  // A step naming a schedule that is not the account's (another account's, or none at all).
  const other = await stack.gw.account();
  const theirs = await createSchedule(other, { name: "Theirs", rotation: rotation() });
  expect(theirs.status).toBe(201);
  const step = await putRoutes(a, { routes: [], default_escalation: [{ type: "wait", minutes: 1 }, { type: "notify_on_call", schedule_id: theirs.body.id }] });
  expect(step.status).toBe(422);
  expect(fields(step)).toEqual([["default_escalation.1.schedule_id", "not_found"]]);
  expect((await stack.gw.http.get("/api/operator/routes").set(a.auth)).body.default.escalation).toEqual([]);
  expect((await stack.gw.http.get(`${SCHEDULES}/sch_01kaq3m2b4c5d6e7f8g9h0jkmn`).set(a.auth)).status).toBe(404);
});
