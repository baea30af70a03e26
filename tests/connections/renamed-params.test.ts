import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startTikTokAdsServer, type TikTokAdsServer } from "../peers/tiktok-ads-server.ts";

// One OAuth flow for every provider, including one that renames RFC 6749's parameters (manifest auth.paramNames):
// TikTok's portal takes the client id as `app_id` and sends the code back as `auth_code`. The browser leg is played
// by the test (TikTok's consent page is a person clicking); the exchange goes to the local TikTok API.

let tt: TikTokAdsServer;
let gw: TestGateway;
beforeAll(async () => {
  tt = await startTikTokAdsServer();
  gw = await startGateway({
    OUTBOUND_ALLOWLIST: "127.0.0.1",
    TIKTOK_ADS_CLIENT_ID: tt.app.appId, TIKTOK_ADS_CLIENT_SECRET: tt.app.secret, TIKTOK_ADS_API_URL: tt.url,
    TIKTOK_ADS_TOKEN_URL: `${tt.url}/open_api/v1.3/oauth2/access_token/`,
  });
});
afterAll(async () => { await gw.close(); await tt.close(); });

test("TikTok: the consent URL names the app as app_id, and a callback with auth_code connects", async () => {
  const a = await gw.account();
  const start = await gw.http.get("/api/integrations/ads/tiktok_ads/auth").set(a.auth);
  expect(start.status).toBe(200);
  const consent = new URL(start.body.authorization_url);
  expect(consent.searchParams.get("app_id")).toBe(tt.app.appId);
  expect(consent.searchParams.has("client_id")).toBe(false);

  tt.addAuthCode("ac-flow-1", { advertisers: ["7000000001"] });
  const back = await gw.http.get("/api/integrations/oauth/callback").query({ auth_code: "ac-flow-1", state: consent.searchParams.get("state") });
  expect(back.status).toBe(200);
  expect(back.text).toMatch(/TikTok Ads/);
  expect(tt.counts.exchanged).toBe(1);
  const conn = await gw.http.get("/api/integrations/ads/tiktok_ads/connection").set(a.auth);
  expect(conn.body).toMatchObject({ status: "connected" });

  // Without any code (under either name) the callback says so, and nothing is exchanged.
  const again = await gw.http.get("/api/integrations/ads/tiktok_ads/auth").set(a.auth);
  const none = await gw.http.get("/api/integrations/oauth/callback").query({ state: new URL(again.body.authorization_url).searchParams.get("state") });
  expect(none.status).toBe(400);
  expect(tt.counts.exchanged).toBe(1);
});
