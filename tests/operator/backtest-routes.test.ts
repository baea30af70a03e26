// The chat-settings backtest opens an item where the live intake would: an event the first matching routing rule
// takes, or one the default route's settings admit (issue 49: a backtest that ignored the rules predicted 9 items
// where 11 opened).
import { insertTrendEvents } from "@trendgate/db";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { trendEvent } from "../helpers/stack.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const PREVIEW = "/api/integrations/chat/settings/preview";

test("a routing rule for a category the settings exclude opens its items in the preview, named with the rule", async () => {
  const a = await gw.account();
  const ev = (name: string, category: string) =>
    trendEvent(a.accountId, { id: `evt_${crypto.randomUUID()}`, type: "trend.detected", trend_id: `trend_${name}`, trend_name: name, category, severity: "high" });
  await insertTrendEvents(gw.deps.db, [ev("Agents", "tech/ai"), ev("Sneakers", "retail/shoes"), ev("Boots", "retail/shoes"), ev("Rain", "weather")]);
  const settings = { min_severity: "low", categories: ["tech"] };

  const before = (await gw.http.post(PREVIEW).set(a.auth).send(settings)).body;
  expect(before.items_opened).toBe(1);
  expect(before.trends).toEqual([expect.objectContaining({ trend_name: "Agents", route_id: null })]);

  const route = await gw.deps.db.operatorRoute.create({
    data: { id: `rte_${crypto.randomUUID()}`, accountId: a.accountId, position: 0, name: "retail desk", match: { categories: ["retail"] }, provider: "slack", channelId: "C_RETAIL" },
  });
  // A rule matching only by signal sources: the replay has none of them, so it takes nothing (documented).
  await gw.deps.db.operatorRoute.create({
    data: { id: `rte_${crypto.randomUUID()}`, accountId: a.accountId, position: 1, name: "reddit desk", match: { sources: ["reddit"] }, provider: "slack", channelId: "C_REDDIT" },
  });
  const after = (await gw.http.post(PREVIEW).set(a.auth).send(settings)).body;
  expect(after.items_opened).toBe(3);
  expect(after.per_day.reduce((s: number, d: { items_opened: number }) => s + d.items_opened, 0)).toBe(3);
  const routeOf = Object.fromEntries(after.trends.map((t: { trend_name: string; route_id: string | null }) => [t.trend_name, t.route_id]));
  expect(routeOf).toEqual({ Agents: null, Sneakers: route.id, Boots: route.id });
});
