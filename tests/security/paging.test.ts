// One paging rule for every list: `limit` in decimal digits within the listing's maximum, and a `cursor` that is a
// next_cursor of that very listing. The table is every route of the registry that answers a page, so a list added
// later is checked with no change here.
import { allRoutes } from "../../apps/gateway/src/routes/index.ts";
import { assertPagingRule } from "../../apps/gateway/src/http/paging-rule.ts";
import { defineRoute, type RouteDef } from "../../apps/gateway/src/http/route.ts";
import { page, pageQuery } from "@trendgate/contracts";
import { z } from "zod";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { exampleFor, exampleProperty } from "../helpers/fuzz-schema.ts";

const isList = (r: RouteDef) => { const s = (r.responses[200]?.schema as { shape?: object } | undefined)?.shape; return !!s && "next_cursor" in s; };
const lists = allRoutes.filter(isList);
const idCursorLists = lists.filter((r) => !(r.query as z.ZodObject).shape.cursor.safeParse("__proto__").success);

let gw: TestGateway;
let auth: { Authorization: string };
let accountId: string;
beforeAll(async () => {
  gw = await startGateway();
  ({ auth, accountId } = await gw.account("enterprise"));
});
afterAll(async () => { await gw.close(); });

const pathOf = (r: RouteDef) => r.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(exampleProperty(r.params!, n)));
function send(r: RouteDef, query: string) {
  const req = gw.http[r.method](`${pathOf(r)}?${query}`).set(auth);
  return r.body ? req.send(exampleFor(r.body).value as object) : req;
}
const fields = (res: { body: any }) => (res.body.errors ?? []).map((e: any) => `${e.location}:${e.path}`);

test("the registry has the lists the rule is about, and every one of them follows it", () => {
  expect(lists.map((r) => r.operationId)).toEqual(expect.arrayContaining([
    "listWebhooks", "listApiKeys", "listAccountEvents", "listCommunityAdsEvents", "listWorkflowPushExecutions", "previewReport", "listGoogleAdsRuns", "listGoogleAdsEntities",
  ]));
  for (const r of lists) expect(() => assertPagingRule(r)).not.toThrow();
});

test("a list route with its own limit or cursor is refused when it is mounted", () => {
  const own = defineRoute({
    method: "get", path: "/x", operationId: "listOwn", summary: "x", tag: "x", auth: "apiKey",
    query: z.object({ limit: z.coerce.number().default(10), cursor: z.string().optional() }),
    responses: { 200: { description: "x", schema: page(z.string()) } }, handler: () => ({ status: 200 }),
  });
  expect(() => assertPagingRule(own)).toThrow(/listOwn.*limit and cursor/);
  expect(() => assertPagingRule({ ...own, query: pageQuery({ limit: 10, max: 20, cursor: { ids: ["wh"] } }) })).not.toThrow();
});

describe.each(lists.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))("%s", (_name, r) => {
  test.each(["1e1", "10.0", "0x10", "+5", " 5", "0", "100000", "-1", "5&limit=6"])("limit=%s is 422 naming limit", async (limit) => {
    const res = await send(r, `limit=${encodeURIComponent(limit).replace("%26limit%3D", "&limit=")}`);
    expect(res.status).toBe(422);
    expect(fields(res)).toContain("query:limit");
  });
});

describe.each(idCursorLists.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))("%s (keyset)", (_name, r) => {
  test.each(["__proto__", "constructor", "%00", "not-a-cursor", "key_01kaq3m2b4c5d6e7f8g9h0jkmn", "wh_01kaq3m2b4c5d6e7f8g9h0jkm"])("cursor=%s is 422 naming cursor", async (cursor) => {
    const own = (r.query as z.ZodObject).shape.cursor.safeParse(cursor).success;
    if (own) return; // an id of this listing's own type (e.g. a key id on the keys list) is a valid cursor
    const res = await send(r, `cursor=${cursor}`);
    expect(res.status).toBe(422);
    expect(fields(res)).toEqual(["query:cursor"]);
  });
});

describe("opaque cursors are sealed for the listing that made them", () => {
  const report = lists.find((r) => r.operationId === "previewReport")!;
  test.each(["__proto__", "eyJza2lwIjoxMH0", "eyJza2lwIjoxMH0.AAAAAAAAAAAAAAAAAAAAAA"])("report preview: cursor=%s is 422 naming cursor", async (cursor) => {
    const res = await send(report, `cursor=${cursor}`);
    expect(res.status).toBe(422);
    expect(fields(res)).toEqual(["query:cursor"]);
  });

  test("chat channels and trends refuse a cursor that is not theirs before calling anyone", async () => {
    for (const path of ["/api/integrations/chat/channels", "/api/trends"]) {
      const res = await gw.http.get(`${path}?cursor=__proto__`).set(auth);
      expect(res.status).toBe(422);
      expect(fields(res)).toEqual(["query:cursor"]);
    }
  });

  test("an ads provider's entity listing answers 422 for a cursor it did not make, not the provider's 502", async () => {
    const res = await gw.http.get("/api/integrations/ads/google_ads/entities?cursor=__proto__").set(auth);
    expect(res.status).toBe(422);
    expect(fields(res)).toEqual(["query:cursor"]);
  });

  test("a webhook id is not a cursor of the API keys list, and a key id is one", async () => {
    const hook = await gw.http.post("/api/integrations/webhooks").set(auth)
      .send({ url: "https://hooks.example.com/in", trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0 });
    const onKeys = await gw.http.get(`/api/keys?cursor=${hook.body.id}`).set(auth);
    expect(onKeys.status).toBe(422);
    expect(fields(onKeys)).toEqual(["query:cursor"]);
    const keyId = (await gw.deps.db.apiKey.findFirstOrThrow({ where: { accountId } })).id;
    expect((await gw.http.get(`/api/integrations/webhooks?cursor=${keyId}`).set(auth)).status).toBe(422);
    const paged = await gw.http.get(`/api/keys?limit=1&cursor=${keyId}`).set(auth);
    expect(paged.status).toBe(200);
  });
});
