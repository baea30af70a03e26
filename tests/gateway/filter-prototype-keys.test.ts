import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { webhookBody } from "../helpers/stack.ts";

// A filter's `match` names only the event's fields. Names every object inherits (constructor, toString, __proto__…)
// are refused like any unknown field, at any depth: passed, a query on them matches everything. A `"__proto__"` key
// is sent as raw JSON (JSON.parse makes it an own key; JSON.stringify of an object literal would not send it).

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const BASE = "/api/integrations/webhooks";
const body = (match: string) => JSON.stringify(webhookBody("https://hooks.example.com/t", { trigger_type: "trend_detected", threshold_value: 0 }))
  .replace(/}$/, `,"filter":{"match":${match}}}`);
const json = { "Content-Type": "application/json" };

const CASES: [string, string][] = [
  ['{"constructor":1}', "filter.match.constructor"],
  ['{"toString":{"$exists":true}}', "filter.match.toString"],
  ['{"hasOwnProperty":"x"}', "filter.match.hasOwnProperty"],
  ['{"prototype":1}', "filter.match.prototype"],
  ['{"__proto__":{"velocity":1}}', "filter.match.__proto__"],
  ['{"__proto__":1}', "filter.match.__proto__"],
  ['{"velocity":{"$gte":1},"__proto__":{"severity":"high"}}', "filter.match.__proto__"],
  ['{"$or":[{"severity":"high"},{"__proto__":1}]}', "filter.match.$or.1.__proto__"],
  ['{"$and":[{"$nor":[{"constructor":{"$eq":1}}]}]}', "filter.match.$and.0.$nor.0.constructor"],
  ['{"$nor":[{"toString":1}]}', "filter.match.$nor.0.toString"],
  ['{"velocity":{"__proto__":{"$gte":1}}}', "filter.match.velocity.__proto__"],
];

describe("filter keys an object inherits", () => {
  test.each(CASES)("POST with match %s answers 422 naming %s, and stores nothing", async (match, path) => {
    const { auth } = await gw.account();
    const res = await gw.http.post(BASE).set(auth).set(json).send(body(match));
    expect([res.status, res.body.code]).toEqual([422, "validation_failed"]);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    expect((await gw.http.get(BASE).set(auth)).body.data).toEqual([]);
  });

  test.each(CASES)("PATCH with match %s answers 422 naming %s, and leaves the stored filter", async (match, path) => {
    const { auth } = await gw.account();
    const filter = { match: { velocity: { $gte: 200 } } };
    const made = await gw.http.post(BASE).set(auth).send(webhookBody("https://hooks.example.com/t", { filter }));
    expect(made.status).toBe(201);
    const res = await gw.http.patch(`${BASE}/${made.body.id}`).set(auth).set(json).send(`{"filter":{"match":${match}}}`);
    expect([res.status, res.body.code]).toEqual([422, "validation_failed"]);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    expect((await gw.http.get(`${BASE}/${made.body.id}`).set(auth)).body.filter).toEqual(filter);
  });

  test("the event's own fields are still accepted", async () => {
    const { auth } = await gw.account();
    const res = await gw.http.post(BASE).set(auth).set(json).send(body('{"$or":[{"severity":"high"},{"velocity":{"$gte":200}}]}'));
    expect(res.status).toBe(201);
    expect(res.body.filter).toEqual({ match: { $or: [{ severity: "high" }, { velocity: { $gte: 200 } }] } });
  });
});
