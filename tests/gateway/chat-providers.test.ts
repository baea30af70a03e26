// GET /api/integrations/chat/providers: the registry's chat providers, so a client (the console's Connections and
// Routing pages) names none itself: each one's id (what a routing rule's `provider` takes), where its routes are,
// whether this server can connect it and whether the account is connected to it.
import { registry } from "@trendgate/connectors";
import { setConnectionNeedsReauth, storeAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

const PATH = "/api/integrations/chat/providers";
let gw: TestGateway;
// Teams' OAuth client is set here and Slack's is not: `configured` tells them apart.
beforeAll(async () => { gw = await startGateway({ TEAMS_CLIENT_ID: "teams-client", TEAMS_CLIENT_SECRET: "teams-secret" }); });
afterAll(async () => { await gw.close(); });

/** A Teams connection stored as the OAuth callback stores one. */
const connectTeams = (accountId: string) => storeAuthorizedConnection(gw.deps.db, {
  accountId, provider: "teams", kind: "chat", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: `graph-${accountId}`, tokenType: "Bearer" }),
  tokenExpiresAt: null, scopes: ["Channel.ReadBasic.All"], externalAccount: { tenant_id: "3f2a0c1e-0000-4000-8000-00000000a11a" },
});

test("lists the registry's chat providers in its order, with where their routes are and whether each can be connected here", async () => {
  const a = await gw.account();
  const res = await gw.http.get(PATH).set(a.auth);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    data: [
      { id: "slack", display_name: "Slack", connected: false, configured: false, base_path: "/api/integrations/chat", channel_id_hint: "a channel id, e.g. C0FINANCE01" },
      { id: "teams", display_name: "Microsoft Teams", connected: false, configured: true, base_path: "/api/integrations/chat/teams", channel_id_hint: "<team id>/<channel id>" },
    ],
  });
  expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(registry.ofKind("chat").map((c) => c.manifest.id));
  // Each base path is where that provider's routes answer: auth starts there exactly when `configured`.
  for (const p of res.body.data as { base_path: string; configured: boolean }[]) {
    const auth = await gw.http.get(`${p.base_path}/auth`).set(a.auth);
    expect(auth.status).toBe(p.configured ? 200 : 501);
    expect((await gw.http.get(`${p.base_path}/connection`).set(a.auth)).body.code).toBe("not_found");
  }
});

test("a provider shows connected for the account that connected it, and not once it needs a new authorization", async () => {
  const a = await gw.account();
  const other = await gw.account();
  const conn = await connectTeams(a.accountId);
  const connected = async (acc: { auth: Record<string, string> }) =>
    Object.fromEntries(((await gw.http.get(PATH).set(acc.auth)).body.data as { id: string; connected: boolean }[]).map((p) => [p.id, p.connected]));
  expect(await connected(a)).toEqual({ slack: false, teams: true });
  expect(await connected(other)).toEqual({ slack: false, teams: false });
  await setConnectionNeedsReauth(gw.deps.db, conn.id, "the tenant revoked the grant");
  expect(await connected(a)).toEqual({ slack: false, teams: false });
});

test("is in the OpenAPI document with its reply schema, and needs a credential", async () => {
  const doc = (await gw.http.get("/openapi.json")).body;
  const op = doc.paths[PATH]?.get;
  expect(op).toMatchObject({ operationId: "listChatProviders" });
  expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ChatProviderList" });
  expect(Object.keys(doc.components.schemas.ChatProvider.properties)).toEqual(["id", "display_name", "connected", "configured", "base_path", "channel_id_hint"]);
  expect((await gw.http.get(PATH)).status).toBe(401);
});
