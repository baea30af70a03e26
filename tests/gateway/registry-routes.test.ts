import { z } from "zod";
import type { SocialConnector } from "@trendgate/connector-social";
import { ConnectorRegistry, registry } from "@trendgate/connectors";
import { basePathOf } from "../../apps/gateway/src/routes/connectors/paths.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

// A gateway serves the connectors of the registry it is given: its connector routes, its OpenAPI document and its
// handlers all come from that one registry, so a provider added there needs no other change to be served and
// documented, and a provider left out is neither.

const fake: SocialConnector = {
  manifest: {
    id: "fake_search", displayName: "Fake Search", kind: "social", operationName: "FakeSearch",
    auth: { mode: "credentials" }, baseUrl: { default: "https://search.invalid", env: "FAKE_SEARCH_BASE_URL" },
    schemas: {
      connection: z.object({
        credentials: z.object({ token: z.string().min(1) }).strict(), terms: z.array(z.string().min(1)).min(1),
        options: z.object({}).strict().default({}), base_url: z.string().nullable().optional(),
      }).strict(),
    },
  },
  connectionNote: "The token is the fake provider's.",
  actions: [{
    kind: "run", name: "lookup", operationId: "lookupFakeSearch", summary: "Look a term up", description: "Queued for the worker.",
    body: z.object({ term: z.string().min(1) }).strict(),
    run: async () => ({}),
  }],
};

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway({}, { registry: new ConnectorRegistry([fake]) }); });
afterAll(async () => { await gw.close(); });

/** Every `METHOD path` the document lists. */
const documented = (doc: { paths: Record<string, object> }) =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));

test("the routes of a registry's only provider answer", async () => {
  const { auth } = await gw.account();
  const base = "/api/integrations/social/fake_search";

  const put = await gw.http.put(`${base}/connection`).set(auth).send({ credentials: { token: "t" }, terms: ["ai agents"] });
  expect(put.status).toBe(200);
  expect(put.body).toMatchObject({ provider: "fake_search", status: "active", terms: ["ai agents"] });

  const queued = await gw.http.post(`${base}/lookup`).set(auth).send({ term: "ai agents" });
  expect(queued.status).toBe(202);
  expect(queued.body).toMatchObject({ action: "lookup", status: "queued", input: { term: "ai agents" } });

  const status = await gw.http.get(`${base}/status`).set(auth);
  expect(status.status).toBe(200);
  expect(status.body.actions.map((a: { id: string }) => a.id)).toEqual([queued.body.id]);

  const list = await gw.http.get("/api/integrations/social/providers").set(auth);
  expect(list.body.data.map((p: { id: string; connected: boolean }) => [p.id, p.connected])).toEqual([["fake_search", true]]);
  // Another account has no connection to it: the list says so (and its status is a 404).
  const other = await gw.account();
  expect((await gw.http.get("/api/integrations/social/providers").set(other.auth)).body.data[0].connected).toBe(false);
  expect((await gw.http.get(`${base}/status`).set(other.auth)).status).toBe(404);
});

test("its OpenAPI document lists the provider's routes and no connector route of a provider it does not hold", async () => {
  const doc = (await gw.http.get("/openapi.json")).body;
  const ops = documented(doc);
  expect(ops).toEqual(expect.arrayContaining([
    "put /api/integrations/social/fake_search/connection",
    "get /api/integrations/social/fake_search/status",
    "post /api/integrations/social/fake_search/lookup",
  ]));
  expect(doc.paths["/api/integrations/social/fake_search/lookup"].post.operationId).toBe("lookupFakeSearch");
  // No route of a provider it does not hold (each provider's routes live under its base path).
  const others = registry.all.map((c) => basePathOf(c.manifest));
  expect(ops.filter((o) => others.some((base) => o.split(" ")[1].startsWith(`${base}/`)))).toEqual([]);
  expect(others).toContain("/api/integrations/social/x");
});

test("a provider the registry does not hold is not served", async () => {
  const { auth } = await gw.account();
  const res = await gw.http.get("/api/integrations/social/x/status").set(auth);
  expect(res.status).toBe(404);
  expect(res.body.code).toBe("route_not_found");
});
