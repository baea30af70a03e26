import { Validator } from "@seriousme/openapi-schema-validator";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

/** The routes Express really serves, read from its router (not from our route list). */
function servedRoutes(app: any): string[] {
  const out = new Set<string>();
  for (const layer of app.router.stack) {
    if (!layer.route || layer.route.stack[0].name === "methodNotAllowed") continue; // the 405 answer for other methods
    const methods = Object.keys(layer.route.methods).filter((m) => m !== "_all");
    for (const m of methods) out.add(`${m} ${layer.route.path.replace(/:(\w+)/g, "{$1}")}`);
  }
  return [...out].sort();
}

test("/openapi.json is a valid OpenAPI 3.1 document", async () => {
  const res = await gw.http.get("/openapi.json");
  expect(res.status).toBe(200);
  expect(res.body.openapi).toMatch(/^3\.1\./);
  const result = await new Validator().validate(res.body);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
});

test("the document lists every route the gateway serves, and nothing it does not", async () => {
  const doc = (await gw.http.get("/openapi.json")).body;
  const documented = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m} ${p}`)).sort();
  expect(documented).toEqual(servedRoutes(gw.app));
  expect(documented.length).toBeGreaterThan(8);
});

test("every {parameter} of a path is declared on each of its operations (OpenAPI requires it; linters refuse the document)", async () => {
  const doc = (await gw.http.get("/openapi.json")).body as { paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>> };
  const undeclared: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(ops)) {
      for (const n of names) if (!op.parameters?.some((p) => p.in === "path" && p.name === n)) undeclared.push(`${method} ${path}: ${n}`);
    }
  }
  expect(undeclared).toEqual([]);
});

test("request schemas in the document are the ones that validate requests", async () => {
  const doc = (await gw.http.get("/openapi.json")).body;
  const schema = doc.components.schemas.CreateApiKeyBody;
  expect(schema.required).toEqual(["name"]);
  expect(schema.properties.name.maxLength).toBe(100);
  const { auth } = await gw.account();
  const tooLong = await gw.http.post("/api/keys").set(auth).send({ name: "x".repeat(101) });
  expect(tooLong.status).toBe(422);
});

test("/docs renders a readable page from local assets", async () => {
  const redirect = await gw.http.get("/docs");
  expect(redirect.status).toBe(301);
  const page = await gw.http.get("/docs/");
  expect(page.status).toBe(200);
  expect(page.text).toContain("swagger-ui");
  expect(page.text).not.toMatch(/https?:\/\/(cdn|unpkg|fonts)/);
  const css = await gw.http.get("/docs/swagger-ui.css");
  expect(css.status).toBe(200);
  const init = await gw.http.get("/docs/swagger-ui-init.js");
  expect(init.text).toContain("Trendgate API");
});

test("the bare address points a visitor on: a page with working links, or the same links as JSON for an API client", async () => {
  const page = await gw.http.get("/").set("accept", "text/html");
  expect(page.status).toBe(200);
  expect(page.headers["content-type"]).toMatch(/^text\/html/);
  const hrefs = [...page.text.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
  expect(hrefs).toEqual(expect.arrayContaining(["/docs/", "/docs/events", "/console/", "/status"]));
  for (const href of hrefs) expect([href, (await gw.http.get(href)).status]).toEqual([href, 200]);
  const json = await gw.http.get("/").set("accept", "application/json");
  expect(json.status).toBe(200);
  expect(json.body.links.map((l: { href: string }) => l.href)).toEqual(hrefs);
});
