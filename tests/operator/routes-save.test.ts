// Saving the routing rules: a rule sent with its id is edited in place (it keeps its id, so its items keep their
// rule), one left out is deleted, one without an id is new. An item keeps the escalation chain it opened with: a save
// while its escalation runs (its rule edited, or deleted) neither switches it to another chain nor stops it. Items
// opened before chains were kept (no chain on the row) read their route's steps as they are now.
import { Prisma } from "@trendgate/db";
import { chatSetupOf, targetOf } from "@trendgate/operator";
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import type { SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, item, posted, publishAndWait, useChatStack, type Account } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
let n = 0;
useChatStack((c) => ({ slack, stack } = c));

const channel = (name: string) => {
  const c = { id: `C0RS${String(++n).padStart(7, "0")}`, name: `${name}-${n}` };
  slack.addChannel({ ...c, botMember: true });
  return c;
};
const putRoutes = (a: { auth: any }, body: object) => stack.gw.http.put("/api/operator/routes").set(a.auth).send(body);
const getRoutes = async (a: { auth: any }) => (await stack.gw.http.get("/api/operator/routes").set(a.auth)).body;
const replies = (channelId: string, ts: string) => slack.messages(channelId).filter((m) => m.threadTs === ts).map((m) => m.text);
const notify = (id: string) => ({ type: "notify", mentions: [{ kind: "user", id }] });
const steps = async (a: Account, id: string) => (await item(stack.gw, a, id)).history
  .filter((h: any) => h.action.startsWith("escalat")).map((h: any) => (h.action === "escalated" ? `escalated:${h.data.step}:${h.data.type}` : h.action));
const busy = { timeoutMs: 45_000 };

test("a rule sent with its id keeps it; one left out is deleted, one without an id is new; ids must be the account's, once each", async () => {
  const a = await connectedAccount(stack, slack, channel("default"));
  const [one, two, three] = [channel("one"), channel("two"), channel("three")];
  const rule = (name: string, c: { id: string }, match: object = {}) => ({ name, match, provider: "slack", channel_id: c.id });
  const first = await putRoutes(a, { routes: [rule("One", one, { categories: ["finance"] }), rule("Two", two)] });
  expect(first.status).toBe(200);
  const [r1, r2] = first.body.routes;

  // One edited (it moves below a new rule), Two left out, Three new.
  const second = await putRoutes(a, { routes: [rule("Three", three), { ...rule("One, edited", one, { categories: ["finance", "tech"] }), id: r1.id, escalation: [notify("U0EDITED01")] }] });
  expect(second.status).toBe(200);
  expect(second.body.routes).toEqual([
    expect.objectContaining({ id: expect.stringMatching(/^rte_/), position: 0, name: "Three", channel_id: three.id }),
    expect.objectContaining({ id: r1.id, position: 1, name: "One, edited", match: { categories: ["finance", "tech"] }, escalation: [notify("U0EDITED01")] }),
  ]);
  expect([r1.id, r2.id]).not.toContain(second.body.routes[0].id);
  expect(await stack.gw.deps.db.operatorRoute.count({ where: { id: r2.id } })).toBe(0);

  // Swapping the two by id keeps both ids; a rule sent back unchanged is not rewritten (its updated_at stays).
  const [r3, r1b] = second.body.routes;
  const swapped = await putRoutes(a, { routes: [{ ...rule(r1b.name, one, r1b.match), id: r1b.id, escalation: r1b.escalation }, { ...rule("Three", three), id: r3.id }] });
  expect(swapped.status).toBe(200);
  expect(swapped.body.routes.map((r: any) => [r.id, r.position])).toEqual([[r1.id, 0], [r3.id, 1]]);
  const again = await putRoutes(a, { routes: swapped.body.routes.map((r: any) => ({ id: r.id, name: r.name, match: r.match, provider: r.provider, channel_id: r.channel_id, escalation: r.escalation })) });
  expect(again.body.routes).toEqual(swapped.body.routes);

  // An id that is not one of the account's rules (deleted, or another account's), or given twice: 422, nothing saved.
  const other = await connectedAccount(stack, slack, channel("other"));
  const theirs = (await putRoutes(other, { routes: [rule("Theirs", channel("theirs"))] })).body.routes[0].id;
  const bad = await putRoutes(a, { routes: [{ ...rule("Gone", one), id: r2.id }, { ...rule("Theirs", one), id: theirs }, { ...rule("Twice", one), id: r1.id }, { ...rule("Twice", one), id: r1.id }] });
  expect(bad.status).toBe(422);
  expect(bad.body.errors.map((e: any) => [e.path, e.code])).toEqual([["routes.3.id", "duplicate_route"]]);
  const unknown = await putRoutes(a, { routes: [{ ...rule("Gone", one), id: r2.id }, { ...rule("Theirs", one), id: theirs }] });
  expect(unknown.status).toBe(422);
  expect(unknown.body.errors.map((e: any) => [e.path, e.code])).toEqual([["routes.0.id", "not_found"], ["routes.1.id", "not_found"]]);
  expect(await getRoutes(a)).toEqual(swapped.body);
  expect((await getRoutes(other)).routes.map((r: any) => r.id)).toEqual([theirs]);
});

test("a save while escalations run (one rule edited, another deleted) leaves each open item on the chain it opened with", async () => {
  const a = await connectedAccount(stack, slack, channel("default"));
  const [fin, tech] = [channel("finance"), channel("tech")];
  const wait = { type: "wait", minutes: 0.25 };
  const put = await putRoutes(a, {
    routes: [
      { name: "Finance", match: { categories: ["finance"] }, provider: "slack", channel_id: fin.id, escalation: [notify("U0FIN00001"), wait, notify("U0FIN00002")] },
      { name: "Tech", match: { categories: ["tech"] }, provider: "slack", channel_id: tech.id, escalation: [notify("U0TECH0001"), wait, notify("U0TECH0002")] },
    ],
    default_escalation: [notify("U0DEFAULT1")],
  });
  expect(put.status).toBe(200);
  const [finance, techRule] = put.body.routes;

  const finItem = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { category: "finance/markets", severity: "critical" }))).id);
  const techItem = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { category: "tech/ai", severity: "critical" }))).id);
  expect(await stack.gw.deps.db.operatorItem.findUniqueOrThrow({ where: { id: finItem.id } })).toMatchObject({
    routeId: finance.id, escalationChain: { route_id: finance.id, steps: [notify("U0FIN00001"), wait, notify("U0FIN00002")] },
  });
  // Both are in their wait (15 s) when the rules are saved.
  for (const it of [finItem, techItem]) await waitFor(async () => (await steps(a, it.id)).includes("escalated:1:wait"), busy);
  const saved = await putRoutes(a, {
    routes: [{ id: finance.id, name: "Finance desk", match: { categories: ["finance"] }, provider: "slack", channel_id: fin.id, escalation: [notify("U0FINNEW01")] }],
    default_escalation: [notify("U0DEFAULT2")],
  });
  expect(saved.status).toBe(200);
  expect(saved.body.routes.map((r: any) => r.id)).toEqual([finance.id]);
  expect(saved.body.routes.map((r: any) => r.id)).not.toContain(techRule.id);

  // Each takes the step after its wait from the chain it opened with, then finishes: no step of the new chains.
  await waitFor(async () => replies(fin.id, finItem.chat.message_ts).length === 2 && replies(tech.id, techItem.chat.message_ts).length === 2, busy);
  expect(replies(fin.id, finItem.chat.message_ts)).toEqual([expect.stringMatching(/^<@U0FIN00001> /), expect.stringMatching(/^<@U0FIN00002> /)]);
  expect(replies(tech.id, techItem.chat.message_ts)).toEqual([expect.stringMatching(/^<@U0TECH0001> /), expect.stringMatching(/^<@U0TECH0002> /)]);
  const chain = ["escalation_started", "escalated:0:notify", "escalated:1:wait", "escalated:2:notify", "escalation_finished"];
  for (const it of [finItem, techItem]) await waitFor(async () => JSON.stringify(await steps(a, it.id)) === JSON.stringify(chain), busy);
  // The edited rule's item keeps its rule (and channel); the deleted rule's keeps its card where it is.
  expect(await item(stack.gw, a, finItem.id)).toMatchObject({ route_id: finance.id, chat: { channel_id: fin.id } });
  expect(await item(stack.gw, a, techItem.id)).toMatchObject({ route_id: techRule.id, chat: { channel_id: tech.id } });

  // An item opened after the save runs the chain saved.
  const next = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { category: "finance/rates", severity: "critical" }))).id);
  expect(next.route_id).toBe(finance.id);
  await waitFor(async () => replies(fin.id, next.chat.message_ts).length === 1, busy);
  expect(replies(fin.id, next.chat.message_ts)).toEqual([expect.stringMatching(/^<@U0FINNEW01> /)]);
}, 150_000);

test("an item opened before chains were kept (none on its row) escalates by its route's steps as they are now", async () => {
  const a = await connectedAccount(stack, slack, channel("default"));
  const fin = channel("finance");
  const body = (escalation: object[]) => ({ id: undefined as string | undefined, name: "Finance", match: { categories: ["finance"] }, provider: "slack", channel_id: fin.id, escalation });
  const rule = (await putRoutes(a, { routes: [body([])] })).body.routes[0];
  const opened = await publishAndWait(stack, a, event(a.accountId, { category: "finance/markets", severity: "low" }));
  const row = await stack.gw.deps.db.operatorItem.update({ where: { id: opened.id }, data: { escalationChain: Prisma.DbNull } });
  expect((await putRoutes(a, { routes: [{ ...body([notify("U0LIVE0001")]), id: rule.id }] })).status).toBe(200);
  const setup = (await chatSetupOf(stack.gw.deps.db, stack.gw.deps.registry, a.accountId, 3600))!;
  expect(targetOf(setup, row)).toMatchObject({ routeId: rule.id, escalationRouteId: rule.id, escalation: [notify("U0LIVE0001")] });
  // The same item with its chain kept runs that chain instead.
  expect(targetOf(setup, { ...row, escalationChain: { route_id: rule.id, steps: [] } })).toMatchObject({ routeId: rule.id, escalation: [] });
});
