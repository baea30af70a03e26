// GET /api/integrations/connections: every provider this server connects (social aside), from the registry, each
// with the account's connection as GET …/connection shows it, or null; another account's connection is not shown.
import { saveAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

test("each provider once, with where its routes are and the account's connection or null", async () => {
  const a = await gw.account();
  const b = await gw.account();
  await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "slack", kind: "chat", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: "xoxb-1", tokenType: "bot" }),
    tokenExpiresAt: null, scopes: ["chat:write"], externalAccount: { team_id: "T0LIST0001" },
  }));

  const res = await gw.http.get("/api/integrations/connections").set(a.auth);
  expect(res.status).toBe(200);
  const byId = new Map((res.body.data as any[]).map((p) => [p.provider, p]));
  const expected = gw.deps.registry.manifests().filter((m) => m.kind !== "social").map((m) => m.id);
  expect(res.body.data.map((p: any) => p.provider)).toEqual(expected);
  expect(byId.get("slack")).toMatchObject({
    kind: "chat", base_path: "/api/integrations/chat", oauth: true,
    connection: { provider: "slack", status: "connected", account: { team_id: "T0LIST0001" }, scopes: ["chat:write"] },
  });
  // The same as the provider's own read.
  expect(byId.get("slack").connection).toEqual((await gw.http.get("/api/integrations/chat/connection").set(a.auth)).body);
  expect(byId.get("n8n")).toMatchObject({ kind: "workflow", oauth: false, configured: true, connection: null });
  // How to connect a provider with no browser flow comes from its manifest, with where its routes are filled in.
  expect(byId.get("n8n").connect_hint).toMatch(/^Connect with the API: POST \/api\/integrations\/workflow\/connect with the instance's URL and an API key/);
  expect(byId.get("slack").connect_hint).toBeNull();
  for (const p of res.body.data as any[]) expect([p.provider, p.oauth || typeof p.connect_hint === "string"]).toEqual([p.provider, true]);
  expect(JSON.stringify(res.body)).not.toMatch(/xoxb-1/);

  const other = await gw.http.get("/api/integrations/connections").set(b.auth);
  expect(other.body.data.every((p: any) => p.connection === null)).toBe(true);
});
