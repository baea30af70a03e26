// Every request body the interface specification's endpoint section shows, sent exactly as it shows them (the field
// names it lists and nothing else; values where it shows one), in its order of use, to a running gateway connected
// to the local stand-ins. A client written from the specification alone must get a 2xx for each, and must be able to
// read back what it saved. The bodies are copied here on purpose: the specification is not part of the repository.
import { saveAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { startN8nServer, type N8nServer } from "../peers/n8n-server.ts";
import { startRedditAdsServer, type RedditAdsServer } from "../peers/reddit-ads-server.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectChat } from "../operator/helpers.ts";

let n8n: N8nServer;
let reddit: RedditAdsServer;
let slack: SlackServer;
let receiver: Receiver;
let stack: Stack;

beforeAll(async () => {
  [n8n, reddit, slack, receiver] = await Promise.all([startN8nServer(), startRedditAdsServer(), startSlackServer(), startReceiver()]);
  stack = await startStack({
    REDDIT_ADS_CLIENT_ID: reddit.app.clientId, REDDIT_ADS_CLIENT_SECRET: reddit.app.clientSecret, REDDIT_ADS_AUTHORIZE_URL: reddit.authorizeUrl,
    REDDIT_ADS_TOKEN_URL: reddit.tokenUrl, REDDIT_ADS_API_URL: reddit.url,
    SLACK_CLIENT_ID: slack.app.clientId, SLACK_CLIENT_SECRET: slack.app.clientSecret, SLACK_API_URL: slack.url, SLACK_AUTHORIZE_URL: slack.authorizeUrl,
  }, 0);
});
afterAll(async () => { await stack.close(); await Promise.all([n8n.close(), reddit.close(), slack.close(), receiver.close()]); });

const http = () => stack.gw.http;
const ok = (res: { status: number; body: unknown }) => expect([res.status, res.status >= 200 && res.status < 300 ? "2xx" : res.body]).toEqual([res.status, "2xx"]);

test("4.2 workflow connector: connect, list workflows, save the selection, push; the selection reads back", async () => {
  const a = await stack.gw.account();
  const wf = n8n.addWorkflow({ name: "Trend to brief", active: true, webhook: { path: "trend-to-brief" } });

  ok(await http().post("/api/integrations/workflow/connect").set(a.auth).send({ api_key: n8n.apiKey, api_base_url: n8n.url, include_metadata: true }));
  ok(await http().get("/api/integrations/workflow/workflows").set(a.auth));
  const selection = { workflow_id: wf.id, workflow_name: "Trend to brief", default_event: "trend_lifecycle", api_base_url: n8n.url };
  ok(await http().put("/api/integrations/workflow/selection").set(a.auth).send(selection));
  ok(await http().post("/api/integrations/workflow/push").set(a.auth).send({ event: "trend_lifecycle", data: { trend: "AI agents", category: "tech/ai" } }));

  const back = await http().get("/api/integrations/workflow/selection").set(a.auth);
  expect(back.status).toBe(200);
  expect(back.body).toMatchObject(selection);
});

test("4.3 community-ads connector: authorization URL, selection, push; the selection reads back", async () => {
  const a = await stack.gw.account();
  ok(await http().get("/api/integrations/community-ads/auth").set(a.auth));
  // The browser step of the specification, done with a conversion access token instead (the same connection row).
  ok(await http().put("/api/integrations/community-ads/token").set(a.auth).send({ access_token: reddit.addConversionToken() }));
  const selection = { account_id: "t2_abc123", pixel_id: "a2_abc123", event_name: "purchase" };
  ok(await http().put("/api/integrations/community-ads/selection").set(a.auth).send(selection));
  ok(await http().post("/api/integrations/community-ads/push").set(a.auth).send({ event_name: "purchase", data: { value: 159.99, currency: "USD" } }));

  const back = await http().get("/api/integrations/community-ads/selection").set(a.auth);
  expect([back.status, back.body]).toEqual([200, selection]);
});

test("4.4 ads providers: every provider the providers endpoint lists takes the selection body {trend_category, strict_safety} and reads it back", async () => {
  const a = await stack.gw.account();
  const providers = await http().get("/api/integrations/ads/providers").set(a.auth);
  ok(providers);
  const ids = (providers.body.data as { id: string }[]).map((p) => p.id);
  expect(ids).toHaveLength(7);
  for (const platform of ids) {
    // The browser authorization the specification describes, as its callback stores it.
    await stack.gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
      accountId: a.accountId, provider: platform, kind: "ads", credentialsSealed: sealTokens(stack.gw.deps.secrets, { accessToken: `tok-${platform}`, tokenType: "bearer" }),
      tokenExpiresAt: new Date(Date.now() + 3600_000), scopes: [], externalAccount: {},
    }));
    const saved = await http().put(`/api/integrations/ads/${platform}/selection`).set(a.auth).send({ trend_category: "tech", strict_safety: true });
    expect([platform, saved.status, saved.body.code]).toEqual([platform, 200, undefined]);
    const back = await http().get(`/api/integrations/ads/${platform}/selection`).set(a.auth);
    expect([platform, back.status, back.body]).toEqual([platform, 200, { trend_category: "tech", strict_safety: true }]);
  }
});

test("4.5 messaging connector: authorization URL, channels, save the channel, settings; the channel reads back", async () => {
  const a = await stack.gw.account();
  slack.addChannel({ id: "C0ALERTS001", name: "alerts", botMember: true });
  ok(await http().get("/api/integrations/chat/auth").set(a.auth));
  await connectChat(stack.gw, a);
  ok(await http().get("/api/integrations/chat/channels").set(a.auth));
  // The specification shows neither body: these are the documented ones.
  ok(await http().post("/api/integrations/chat/save-channel").set(a.auth).send({ channel_id: "C0ALERTS001" }));
  ok(await http().put("/api/integrations/chat/settings").set(a.auth).send({}));

  const back = await http().get("/api/integrations/chat/channel").set(a.auth);
  expect([back.status, back.body]).toEqual([200, { channel_id: "C0ALERTS001", channel_name: "alerts", is_private: false }]);
});

test("4.6 webhooks: create with the five fields, test, executions with limit, delete", async () => {
  const a = await stack.gw.account();
  const created = await http().post("/api/integrations/webhooks").set(a.auth).send({
    url: receiver.url("/trend-alerts"), trigger_type: "trend_velocity", delivery_mode: "instant_stream", threshold_value: 2.5, cooldown_seconds: 600,
  });
  ok(created);
  expect(typeof created.body.id).toBe("string");
  ok(await http().post(`/api/integrations/webhooks/${created.body.id}/test`).set(a.auth));
  ok(await http().get(`/api/integrations/webhooks/${created.body.id}/executions`).query({ limit: 10 }).set(a.auth));
  ok(await http().delete(`/api/integrations/webhooks/${created.body.id}`).set(a.auth));
});

// GET /status is left out: it answers 503 when a dependency check is slow, which a loaded test machine can cause.
test("4.1 read endpoints answer, the trends one with its category query", async () => {
  const a = await stack.gw.account();
  ok(await http().get("/api/trends").query({ category: "tech" }).set(a.auth));
  ok(await http().get("/api/intelligence/recommendations").set(a.auth));
});

test("reading back before saving: 404 not_found for the selections and the channel, an empty mapping", async () => {
  const a = await stack.gw.account();
  ok(await http().post("/api/integrations/workflow/connect").set(a.auth).send({ api_key: n8n.apiKey, api_base_url: n8n.url, include_metadata: false }));
  ok(await http().put("/api/integrations/community-ads/token").set(a.auth).send({ access_token: reddit.addConversionToken() }));
  await connectChat(stack.gw, a);
  await stack.gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "meta_ads", kind: "ads", credentialsSealed: sealTokens(stack.gw.deps.secrets, { accessToken: "tok", tokenType: "bearer" }),
    tokenExpiresAt: new Date(Date.now() + 3600_000), scopes: [], externalAccount: {},
  }));
  for (const path of ["/api/integrations/workflow/selection", "/api/integrations/community-ads/selection", "/api/integrations/ads/meta_ads/selection", "/api/integrations/chat/channel"]) {
    const res = await http().get(path).set(a.auth);
    expect([path, res.status, res.body.code]).toEqual([path, 404, "not_found"]);
  }
  const mappings = await http().get("/api/integrations/ads/meta_ads/mappings").set(a.auth);
  expect([mappings.status, mappings.body]).toEqual([200, { entities: [] }]);

  const stranger = await stack.gw.account(); // not connected: the same 409 as saving
  for (const path of ["/api/integrations/workflow/selection", "/api/integrations/community-ads/selection", "/api/integrations/ads/meta_ads/selection", "/api/integrations/ads/meta_ads/mappings", "/api/integrations/chat/channel"]) {
    const res = await http().get(path).set(stranger.auth);
    expect([path, res.status, res.body.code]).toEqual([path, 409, "not_connected"]);
  }
});

test("the OpenAPI document lists the read-back routes with their schemas, and the ads selection needs trend_category only", async () => {
  const doc = (await http().get("/openapi.json")).body;
  const ok200 = (path: string) => doc.paths[path]?.get?.responses?.["200"]?.content?.["application/json"]?.schema;
  for (const path of ["/api/integrations/workflow/selection", "/api/integrations/community-ads/selection", "/api/integrations/chat/channel", "/api/integrations/chat/settings"])
    expect([path, ok200(path)]).toEqual([path, expect.anything()]);
  for (const p of ["google_ads", "meta_ads", "tiktok_ads", "linkedin_ads", "microsoft_ads", "snap_ads", "pinterest_ads"])
    for (const r of ["selection", "mappings", "accounts"]) expect([p, r, ok200(`/api/integrations/ads/${p}/${r}`)]).toEqual([p, r, expect.anything()]);
  expect(doc.components.schemas.AdsSelection.required).toEqual(["trend_category"]);
  expect(doc.components.schemas.AdsProvider.required).toContain("configured");
});
