import fs from "node:fs";
import { z } from "zod";
import { JOB_PAYLOADS, QUEUES } from "@trendgate/contracts";
import { isOAuth } from "@trendgate/connector-core";
import { isPolled } from "@trendgate/connector-social";
import { CONNECTORS, ConnectorRegistry, registry } from "@trendgate/connectors";
import { basePathOf } from "../../apps/gateway/src/routes/connectors/paths.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

// What "adding a provider = its folder + one registry line" relies on, checked for every registered provider of
// every kind: a provider that breaks one of these fails here, naming itself, instead of at a user's request.

const envExample = fs.readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
/** Variables .env.example documents, set or commented out (`# NAME=example`). */
const documented = new Set([...envExample.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));

const social = registry.ofKind("social");

test("every provider has a unique, well-formed id and the registry accepts the list", () => {
  expect(CONNECTORS.length).toBeGreaterThanOrEqual(5);
  const ids = CONNECTORS.map((c) => c.manifest.id);
  expect(ids.filter((id) => !/^[a-z][a-z0-9_]*$/.test(id))).toEqual([]);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  expect(() => new ConnectorRegistry(CONNECTORS)).not.toThrow();
  // operationIds are built from operationName: two providers of a kind sharing one would share operationIds.
  for (const kind of new Set(CONNECTORS.map((c) => c.manifest.kind))) {
    const names = registry.ofKind(kind).map((c) => c.manifest.operationName);
    expect({ kind, duplicates: names.filter((n, i) => names.indexOf(n) !== i) }).toEqual({ kind, duplicates: [] });
  }
  // The registry refuses what these checks look for (so a bad line fails at start-up too).
  expect(() => new ConnectorRegistry([...CONNECTORS, CONNECTORS[0]])).toThrow(/registered twice/);
});

test("a provider is found by kind and id, and not under another kind", () => {
  for (const c of CONNECTORS) {
    expect(registry.find(c.manifest.kind, c.manifest.id)).toBe(c);
    const other = c.manifest.kind === "ads" ? "social" : "ads";
    expect(registry.find(other, c.manifest.id)).toBeUndefined();
  }
  expect(registry.find("ads", "removed_provider")).toBeUndefined();
});

test("every configuration variable a manifest names is documented in .env.example", () => {
  const missing: string[] = [];
  for (const { manifest: m } of CONNECTORS) {
    const vars = [m.baseUrl.env, ...Object.values(m.env ?? {}), ...(isOAuth(m) ? Object.values(m.auth.env) : [])].filter((v): v is string => !!v);
    for (const v of vars) if (!documented.has(v)) missing.push(`${m.id}: ${v}`);
  }
  expect(missing).toEqual([]);
});

test("every manifest's schemas are zod objects, and social connection bodies have the shape the routes store", () => {
  const bad: string[] = [];
  for (const { manifest: m } of CONNECTORS) {
    for (const [name, schema] of Object.entries(m.schemas)) if (schema && !(schema instanceof z.ZodObject)) bad.push(`${m.id}.${name}`);
  }
  expect(bad).toEqual([]);
  for (const c of social) {
    const shape = (c.manifest.schemas.connection as z.ZodObject).shape;
    expect({ id: c.manifest.id, fields: Object.keys(shape) }).toEqual({
      id: c.manifest.id, fields: expect.arrayContaining(["credentials", "terms", "options", "base_url", ...(c.extraUrlFields ?? [])]),
    });
  }
});

test("every social action has its own path segment, a poll action only on polled providers, and a queueable name", () => {
  for (const c of social) {
    expect(c.manifest.id).not.toBe("providers"); // GET /api/integrations/social/providers is the list
    const names = c.actions.map((a) => a.name);
    expect({ id: c.manifest.id, names }).toEqual({ id: c.manifest.id, names: [...new Set(names)] });
    for (const a of c.actions) {
      expect(a.name).toMatch(/^[a-z][a-z0-9_-]*$/);
      expect(["connection", "status"]).not.toContain(a.name);
      if (a.kind === "poll") expect({ id: c.manifest.id, polled: isPolled(c) }).toEqual({ id: c.manifest.id, polled: true });
      // The social-poll job carries the action's name: its payload schema must accept it.
      expect(JOB_PAYLOADS[QUEUES.socialPoll].safeParse({ connection_id: "soc_1", action: a.name, action_id: "act_1" }).success).toBe(true);
    }
  }
});

describe("served routes", () => {
  let gw: TestGateway;
  beforeAll(async () => { gw = await startGateway(); });
  afterAll(async () => { await gw.close(); });

  /** The routes Express really serves, read from its router. */
  function served(app: any): Set<string> {
    const out = new Set<string>();
    for (const layer of app.router.stack) {
      if (!layer.route || layer.route.stack[0].name === "methodNotAllowed") continue;
      for (const m of Object.keys(layer.route.methods).filter((x) => x !== "_all")) out.add(`${m} ${layer.route.path.replace(/:(\w+)/g, "{$1}")}`);
    }
    return out;
  }

  test("every social provider's routes are served and listed in /openapi.json", async () => {
    const doc = (await gw.http.get("/openapi.json")).body;
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m} ${p}`)));
    const routes = served(gw.app);
    const expected = ["get /api/integrations/social/providers", ...social.flatMap((c) => {
      const base = basePathOf(c.manifest);
      return [`put ${base}/connection`, `get ${base}/status`, ...c.actions.map((a) => `post ${base}/${a.name}`)];
    })];
    expect(expected.filter((r) => !routes.has(r))).toEqual([]);
    expect(expected.filter((r) => !documented.has(r))).toEqual([]);
    // Each connection route documents its provider's own body.
    for (const c of social) {
      const put = doc.paths[`${basePathOf(c.manifest)}/connection`].put;
      expect(put.operationId).toBe(`put${c.manifest.operationName}Connection`);
      expect(put.requestBody.content["application/json"].schema.$ref).toMatch(/^#\/components\/schemas\//);
    }
  });
});
