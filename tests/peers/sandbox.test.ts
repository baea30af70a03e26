import crypto from "node:crypto";
import { googleAds, linkedinAds, metaAds, microsoftAds, pinterestAds, snapAds, tiktokAds, type AdsConnector, type ReportRow } from "@trendgate/connector-ads";
import { redditAds } from "@trendgate/connector-conversions";
import { baseUrlOf, OAuth2Client, oauthClientOf } from "@trendgate/connector-core";
import { teams } from "../../packages/connectors/chat/src/teams/index.ts";
import { operatorCardFixture } from "../helpers/chat-card.ts";
import { startGateway } from "../helpers/gateway.ts";
import { browse, parseConsentForm } from "./consent-page.ts";
import { SANDBOX_PORTS, SANDBOX_STATS_DAYS, sandboxDay, sandboxEnvText, startSandbox, type Sandbox } from "./sandbox.ts";

// The sandbox (npm run sandbox) as a person uses it: every advertised port answers, each *_AUTHORIZE_URL it prints is
// a consent page, and a browser flow goes through that page with plain HTTP (GET the page, POST Approve, follow the
// redirects to the callback with a code) to a token the provider's API accepts: Google (the oidc-provider peer on
// Google's paths, PKCE and a refresh token) and Meta; Deny sends the browser back with access_denied. Every ads
// provider's account has daily stats for the last SANDBOX_STATS_DAYS days: a report of the last 7 reads rows, through
// the service (Google: connect in the browser, select, preview) and through each provider's reporting client with a
// token its stand-in issued after the consent page. Microsoft Teams: the service connects on its consent page and lists
// the seeded team's channels, and a card its connector posts shows on the inbox page and in /received.json, as do a
// conversion the Reddit Ads connector sends and a targeting change the TikTok Ads client applies.

const REDIRECT = "http://localhost:3000/api/integrations/oauth/callback";
let sb: Sandbox;
/** When the sandbox seeded its stats: "today" is that day, even if a midnight passes while the tests run. */
let seededAt: Date;

beforeAll(async () => {
  // A run of consecutive ports (one per SANDBOX_PORTS entry), below Linux's ephemeral range (32768+) where every other test's connections take
  // their local ports; another process may still hold one of them, so try a few bases (the error may come wrapped).
  for (let attempt = 0; ; attempt++) {
    try {
      sb = await startSandbox({ basePort: 20_000 + Math.floor(Math.random() * 10_000), redirectUris: [REDIRECT] });
      seededAt = new Date();
      return;
    } catch (e) {
      if (!/EADDRINUSE/.test(`${(e as NodeJS.ErrnoException).code} ${String(e)}`) || attempt === 9) throw e;
    }
  }
}, 60_000);
afterAll(() => sb?.close());

/** A browser's cookie jar and manual redirects, so each hop is visible. */
function browser() {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
    for (const c of res.headers.getSetCookie()) { const [pair] = c.split(";"); const i = pair.indexOf("="); jar.set(pair.slice(0, i).trim(), pair.slice(i + 1)); }
    return res;
  };
}

/** GETs the authorization URL and follows the provider's own redirects to the consent page; returns its form. */
async function consentPage(go: ReturnType<typeof browser>, authorizationUrl: string) {
  let at = authorizationUrl;
  for (let hop = 0; hop < 5; hop++) {
    const res = await go(at);
    if (res.status >= 300 && res.status < 400) { await res.body?.cancel(); at = new URL(res.headers.get("location")!, at).href; continue; }
    const html = await res.text();
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    expect(html).toMatch(/<button[^>]*value="approve"[^>]*>Approve<\/button>/);
    expect(html).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);
    return { html, form: parseConsentForm(html, at)! };
  }
  throw new Error("no consent page");
}

/** Presses a button, then follows redirects until the browser is sent back to REDIRECT; returns that URL. */
async function press(go: ReturnType<typeof browser>, form: { action: string; fields: URLSearchParams }, decision: "approve" | "deny") {
  const body = new URLSearchParams(form.fields);
  body.set("decision", decision);
  let res = await go(form.action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() });
  for (let hop = 0; hop < 5; hop++) {
    expect([302, 303]).toContain(res.status);
    const next = new URL(res.headers.get("location")!, form.action);
    if (next.href.startsWith(REDIRECT)) return next;
    res = await go(next.href);
  }
  throw new Error("never sent back to the client");
}

test("every advertised port answers HTTP, and the printed env names each stand-in's address", async () => {
  expect(sb.services.map((s) => s.service).sort()).toEqual(Object.keys(SANDBOX_PORTS).sort());
  for (const s of sb.services) {
    expect(s.port).toBe(sb.basePort + SANDBOX_PORTS[s.service]);
    const res = await fetch(`http://127.0.0.1:${s.port}/`);
    await res.body?.cancel();
    expect(res.status).toBeGreaterThanOrEqual(200);
  }
  const text = sandboxEnvText(sb);
  expect(text).toContain(`GOOGLE_ADS_AUTHORIZE_URL=http://127.0.0.1:${sb.basePort + SANDBOX_PORTS.google_oauth}/o/oauth2/v2/auth`);
  expect(text).toContain("OUTBOUND_ALLOWLIST=127.0.0.1");
  // Teams: Graph, the bot's token endpoint, the Connector and its signing keys at base+17; the tenant's OAuth at base+18.
  const teamsAt = `http://127.0.0.1:${sb.basePort + 17}`;
  expect(sb.services.find((s) => s.service === "teams")).toMatchObject({ port: sb.basePort + 17, url: teamsAt });
  expect(Object.fromEntries(Object.entries(sb.env).filter(([k]) => k.startsWith("TEAMS_")))).toEqual({
    TEAMS_GRAPH_URL: `${teamsAt}/v1.0/`, TEAMS_SERVICE_URL: `${teamsAt}/teams/`, TEAMS_OPENID_METADATA_URL: `${teamsAt}/v1/.well-known/openidconfiguration`,
    TEAMS_BOT_TOKEN_URL: `${teamsAt}/00000000-0000-4000-8000-00000000e002/oauth2/v2.0/token`, TEAMS_BOT_TENANT_ID: "00000000-0000-4000-8000-00000000e002",
    TEAMS_APP_ID: "00000000-0000-4000-8000-00000000e001", TEAMS_APP_PASSWORD: expect.stringMatching(/^sandbox-teams-/),
    TEAMS_CLIENT_ID: "sandbox-teams-client", TEAMS_CLIENT_SECRET: expect.stringMatching(/^sandbox-teams-secret-/),
    TEAMS_AUTHORIZE_URL: `http://127.0.0.1:${sb.basePort + 18}/organizations/oauth2/v2.0/authorize`, TEAMS_TOKEN_URL: `${teamsAt}/organizations/oauth2/v2.0/token`,
  });
  for (const [k, v] of Object.entries(sb.env).filter(([k]) => k.startsWith("TEAMS_"))) expect(text).toContain(`${k}=${v}\n`);
  expect(Object.keys(sb.env).filter((k) => k.endsWith("_AUTHORIZE_URL")).sort()).toEqual([
    "GOOGLE_ADS", "LINKEDIN_ADS", "META_ADS", "MICROSOFT_ADS", "PINTEREST_ADS", "REDDIT_ADS", "SLACK", "SNAP_ADS", "TEAMS", "TIKTOK_ADS",
  ].map((p) => `${p}_AUTHORIZE_URL`));
});

test("each *_AUTHORIZE_URL printed is a consent page naming the app and its permissions", async () => {
  for (const [name, url] of Object.entries(sb.env).filter(([k]) => k.endsWith("_AUTHORIZE_URL"))) {
    const provider = name.replace(/_AUTHORIZE_URL$/, "");
    const clientId = sb.env[`${provider}_CLIENT_ID`];
    const q = new URL(url);
    q.search = new URLSearchParams({
      [provider === "TIKTOK_ADS" ? "app_id" : "client_id"]: clientId, redirect_uri: REDIRECT, state: "st", response_type: "code", duration: "permanent",
      scope: provider === "SLACK" ? "channels:read,chat:write" : provider === "GOOGLE_ADS" ? "https://www.googleapis.com/auth/adwords" : provider === "TEAMS" ? "offline_access User.Read" : "read",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256",
    }).toString();
    const { html } = await consentPage(browser(), q.href);
    expect([name, html]).toEqual([name, expect.stringContaining(clientId)]);
  }
});

test("Google: authorize (PKCE, offline, consent) -> consent page -> Approve -> callback with code -> tokens the Ads API accepts; refresh keeps the refresh token", async () => {
  const verifier = crypto.randomBytes(32).toString("base64url");
  const auth = new URL(sb.env.GOOGLE_ADS_AUTHORIZE_URL);
  auth.search = new URLSearchParams({
    access_type: "offline", prompt: "consent", response_type: "code", client_id: sb.env.GOOGLE_ADS_CLIENT_ID, redirect_uri: REDIRECT,
    scope: "https://www.googleapis.com/auth/adwords", state: "google-state-1",
    code_challenge: crypto.createHash("sha256").update(verifier).digest("base64url"), code_challenge_method: "S256",
  }).toString();
  const go = browser();
  const { html, form } = await consentPage(go, auth.href);
  expect(html).toContain("https://www.googleapis.com/auth/adwords");
  expect(html).toContain("customer 1234567890 (Acme Outdoor (sandbox))");
  const back = await press(go, form, "approve");
  expect(back.searchParams.get("state")).toBe("google-state-1");
  const code = back.searchParams.get("code")!;
  expect(code).toBeTruthy();

  const token = async (form: Record<string, string>) => {
    const res = await fetch(sb.env.GOOGLE_ADS_TOKEN_URL, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ client_id: sb.env.GOOGLE_ADS_CLIENT_ID, client_secret: sb.env.GOOGLE_ADS_CLIENT_SECRET, ...form }) });
    return { status: res.status, body: await res.json() as Record<string, any> };
  };
  const first = await token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier });
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: "Bearer" });

  const list = await fetch(`${sb.env.GOOGLE_ADS_API_URL}/v25/customers:listAccessibleCustomers`, { headers: { authorization: `Bearer ${first.body.access_token}` } });
  expect(await list.json()).toEqual({ resourceNames: ["customers/1234567890"] });

  const refreshed = await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token });
  expect(refreshed.status).toBe(200);
  expect(refreshed.body.refresh_token).toBeUndefined(); // as Google: the refresh token stays the same
  const again = await fetch(`${sb.env.GOOGLE_ADS_API_URL}/v25/customers:listAccessibleCustomers`, { headers: { authorization: `Bearer ${refreshed.body.access_token}` } });
  expect(again.status).toBe(200);
  // The code works once (and a second use revokes what it gave, as the RFC advises).
  expect((await token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier })).body.error).toBe("invalid_grant");
});

test("Meta: dialog -> consent page listing the ad account -> Approve -> callback with code -> a token that reads the ad account", async () => {
  const dialog = new URL(sb.env.META_ADS_AUTHORIZE_URL);
  dialog.search = new URLSearchParams({ client_id: sb.env.META_ADS_CLIENT_ID, redirect_uri: REDIRECT, state: "meta-state-1", scope: "ads_management,ads_read,business_management" }).toString();
  const go = browser();
  const { html, form } = await consentPage(go, dialog.href);
  expect(html).toContain("act_1000000001 (Acme Outdoor US)");
  const back = await press(go, form, "approve");
  expect(back.searchParams.get("state")).toBe("meta-state-1");

  const exchange = new URL(sb.env.META_ADS_TOKEN_URL);
  exchange.search = new URLSearchParams({ client_id: sb.env.META_ADS_CLIENT_ID, client_secret: sb.env.META_ADS_CLIENT_SECRET, redirect_uri: REDIRECT, code: back.searchParams.get("code")! }).toString();
  const tokens = await (await fetch(exchange)).json() as { access_token: string };
  expect(tokens.access_token).toEqual(expect.any(String));
  const accounts = await fetch(`${sb.env.META_ADS_API_URL}/v27.0/me/adaccounts?fields=id,name`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect((await accounts.json() as { data: unknown[] }).data).toEqual([expect.objectContaining({ id: "act_1000000001", name: "Acme Outdoor US" })]);
});

test("Deny sends the browser back with error=access_denied and the state, and no code", async () => {
  const portal = new URL(sb.env.TIKTOK_ADS_AUTHORIZE_URL);
  portal.search = new URLSearchParams({ app_id: sb.env.TIKTOK_ADS_CLIENT_ID, redirect_uri: REDIRECT, state: "tt-state-1" }).toString();
  const go = browser();
  const back = await press(go, (await consentPage(go, portal.href)).form, "deny");
  expect(Object.fromEntries(back.searchParams)).toEqual({ error: "access_denied", error_description: "The user denied access", state: "tt-state-1" });
});

// ---- ads reporting over the seeded stats ------------------------------------------------------------------------------

/** Each ads provider: its connector, the account_id to select (docs/connectors.md "Sandbox") and its seeded ad groups. */
const ADS: { connector: AdsConnector; account: string; adGroups: number }[] = [
  { connector: googleAds, account: "1234567890", adGroups: 2 },
  { connector: metaAds, account: "act_1000000001", adGroups: 2 },
  { connector: linkedinAds, account: "508000001", adGroups: 2 },
  { connector: tiktokAds, account: "7100000001", adGroups: 2 },
  { connector: microsoftAds, account: "251000001:180000001", adGroups: 2 },
  { connector: snapAds, account: "00000000-0000-4000-8000-00000000c001", adGroups: 2 },
  { connector: pinterestAds, account: "549755885175", adGroups: 1 },
];

/** The last 7 days, today included, in the account's time zone. */
const lastWeek = (timeZone: string) => Array.from({ length: 7 }, (_, i) => sandboxDay(timeZone, 6 - i, seededAt));

/** Rows of a daily ad-group report: one per ad group and day, with delivery on every one. */
function expectDailyRows(provider: string, rows: Pick<ReportRow, "date" | "ad_group_id" | "impressions" | "clicks" | "spend_micros" | "conversions">[], days: string[], adGroups: number) {
  expect([provider, [...new Set(rows.map((r) => r.date))].sort()]).toEqual([provider, days]);
  expect([provider, new Set(rows.map((r) => r.ad_group_id)).size, rows.length]).toEqual([provider, adGroups, adGroups * days.length]);
  for (const r of rows) {
    expect([provider, r.impressions > r.clicks, r.clicks > 0, BigInt(r.spend_micros) > 0n, (r.conversions ?? -1) >= 0]).toEqual([provider, true, true, true, true]);
  }
  // Believable: not the same numbers every day.
  expect([provider, new Set(rows.map((r) => r.impressions)).size > adGroups]).toEqual([provider, true]);
}

test(`every ads provider's reporting client reads the seeded daily stats of the last 7 days (${SANDBOX_STATS_DAYS} are seeded), with a token its stand-in issued`, async () => {
  process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";
  const env = { ...sb.env, MICROSOFT_ADS_REPORT_POLL_SECONDS: "0.05" };
  for (const { connector, account, adGroups } of ADS) {
    const id = connector.manifest.id;
    const settings = oauthClientOf(connector.manifest, env);
    if ("missing" in settings) throw new Error(`${id}: the sandbox env lacks ${settings.missing.join(", ")}`);
    const oauth = new OAuth2Client(connector.manifest as ConstructorParameters<typeof OAuth2Client>[0], settings.client);
    const codeVerifier = oauth.newCodeVerifier();
    const back = await browse(await oauth.authorizationUrl({ redirectUri: REDIRECT, state: `${id}-state`, codeVerifier }));
    const code = back.searchParams.get("code") ?? back.searchParams.get("auth_code");
    expect([id, typeof code]).toEqual([id, "string"]);
    const tokens = await oauth.exchangeCode({ code: code!, redirectUri: REDIRECT, codeVerifier });

    const client = connector.reporting!.client({ baseUrl: baseUrlOf(connector.manifest, env), accessToken: tokens.accessToken, env });
    const { time_zone } = await client.account(account);
    const days = lastWeek(time_zone);
    const rows: ReportRow[] = [];
    for await (const page of client.pages({ accountId: account, level: "ad_group", from: days[0], to: days[6], granularity: "day" }, {})) rows.push(...page);
    expectDailyRows(id, rows, days, adGroups);
  }
}, 60_000);

test("Google Ads through the service: connect on the consent page, select the customer, preview the last 7 days", async () => {
  const gw = await startGateway({ ...sb.env, OAUTH_REDIRECT_URL: REDIRECT });
  try {
    const a = await gw.account();
    const start = await gw.http.get("/api/integrations/ads/google_ads/auth").set(a.auth);
    expect(start.status).toBe(200);
    const back = await browse(start.body.authorization_url);
    expect(back.href.startsWith(REDIRECT)).toBe(true);
    const page = await gw.http.get(back.pathname + back.search);
    expect(page.status).toBe(200);
    const sel = await gw.http.put("/api/integrations/ads/google_ads/selection").set(a.auth).send({ trend_category: "sports", account_id: "1234567890" });
    expect(sel.status).toBe(200);

    const days = lastWeek("America/New_York"); // the customer's time zone
    const res = await gw.http.post("/api/integrations/ads/reporting/preview").set(a.auth)
      .send({ providers: ["google_ads"], from: days[0], to: days[6], granularity: "day", level: "ad_group" });
    expect(res.status).toBe(200);
    expect(res.body.providers).toEqual([expect.objectContaining({ provider: "google_ads", status: "ok", account_id: "1234567890", currency: "USD", time_zone: "America/New_York", rows: 14 })]);
    expectDailyRows("google_ads", res.body.data, days, 2);
    expect(res.body.data[0]).toMatchObject({ provider: "google_ads", campaign_name: "Search: running shoes", currency: "USD" });
    expect(new Set(res.body.data.map((r: ReportRow) => r.ad_group_name))).toEqual(new Set(["Trail running", "Road running"]));
  } finally {
    await gw.close();
  }
}, 60_000);

// ---- Microsoft Teams -------------------------------------------------------------------------------------------------

test("Teams through the service: connect on the consent page, list the seeded team's channels, save the trend alerts channel", async () => {
  const gw = await startGateway({ ...sb.env, OAUTH_REDIRECT_URL: REDIRECT });
  try {
    const a = await gw.account();
    const start = await gw.http.get("/api/integrations/chat/teams/auth").set(a.auth);
    expect(start.status).toBe(200);
    expect(start.body.authorization_url.startsWith(sb.env.TEAMS_AUTHORIZE_URL)).toBe(true);
    const { html } = await consentPage(browser(), start.body.authorization_url);
    expect(html).toContain("Microsoft Teams in Acme Outdoor");
    const back = await browse(start.body.authorization_url);
    expect(back.href.startsWith(REDIRECT)).toBe(true);
    expect((await gw.http.get(back.pathname + back.search)).status).toBe(200);

    const listed = await gw.http.get("/api/integrations/chat/teams/channels").set(a.auth);
    expect(listed.status).toBe(200);
    const names = listed.body.data.map((c: { name: string }) => c.name);
    expect(names).toEqual(expect.arrayContaining(["Acme Marketing (sandbox) / General", "Acme Marketing (sandbox) / Trend alerts", "Acme Marketing (sandbox) / Marketing ops"]));
    const alerts = listed.body.data.find((c: { name: string }) => c.name.endsWith("/ Trend alerts"));
    expect(alerts).toMatchObject({ is_private: false, is_member: true });
    const saved = await gw.http.post("/api/integrations/chat/teams/save-channel").set(a.auth).send({ channel_id: alerts.id });
    expect(saved.status).toBe(200);
  } finally {
    await gw.close();
  }
}, 60_000);

test("a card the Teams connector posts shows on the inbox page and in /received.json, as Slack's messages do", async () => {
  process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";
  const settings = oauthClientOf(teams.manifest, sb.env);
  if ("missing" in settings) throw new Error(`the sandbox env lacks ${settings.missing.join(", ")}`);
  const oauth = new OAuth2Client(teams.manifest as ConstructorParameters<typeof OAuth2Client>[0], settings.client);
  const codeVerifier = oauth.newCodeVerifier();
  const back = await browse(await oauth.authorizationUrl({ redirectUri: REDIRECT, state: "teams-state", codeVerifier }));
  const tokens = await oauth.exchangeCode({ code: back.searchParams.get("code")!, redirectUri: REDIRECT, codeVerifier });
  expect(tokens.account).toEqual({ tenant_id: "00000000-0000-4000-8000-00000000e003", tenant_name: "Acme Outdoor" });

  const chat = teams.client({ baseUrl: baseUrlOf(teams.manifest, sb.env), accessToken: tokens.accessToken, account: tokens.account, env: sb.env });
  const channel = (await chat.listChannels({ limit: 50 })).channels.find((c) => c.name === "Acme Marketing (sandbox) / Trend alerts")!;
  expect(channel).toMatchObject({ isMember: true, isArchived: false });
  const ref = await chat.postCard(channel.id, operatorCardFixture({ title: "Waterproof trail shoes", severity: "critical" }));
  await chat.postReply(ref, "Escalated to the on-call marketer.");

  const received = await (await fetch(`${sb.inbox.url}/received.json`)).json() as { teams_messages: Record<string, unknown>[] };
  const card = received.teams_messages.find((m) => String(m.text).includes("Waterproof trail shoes"));
  expect(card).toEqual({
    channel: "Acme Marketing (sandbox) / Trend alerts", conversation_id: ref.channelId, activity_id: ref.ts, reply_to: null,
    text: expect.stringMatching(/^Critical: Waterproof trail shoes/), updates: 0,
  });
  expect(received.teams_messages).toContainEqual(expect.objectContaining({ conversation_id: ref.channelId, reply_to: ref.ts, text: "Escalated to the on-call marketer." }));

  const page = await (await fetch(`${sb.inbox.url}/`)).text();
  expect(page).toMatch(/<h2>Teams messages \(\d+\)<\/h2>/);
  expect(page).toContain("<td>Acme Marketing (sandbox) / Trend alerts</td>");
  expect(page).toContain("Critical: Waterproof trail shoes");
});

// ---- conversions and ads writes on the inbox ---------------------------------------------------------------------------

test("a conversion the Reddit Ads connector sends and a targeting change TikTok applies show on the inbox page and in /received.json", async () => {
  process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";
  // The conversion token the sandbox prints for connecting reddit_ads.
  const token = /"access_token": "([^"]+)"/.exec(sb.credentials.find((c) => c.connector === "reddit_ads")!.how)![1];
  const conversions = redditAds.client({ baseUrl: sb.env.REDDIT_ADS_API_URL, accessToken: token, env: sb.env });
  const sent = await conversions.sendBatch("a2_sandbox1", [
    { event_name: "purchase", data: { conversion_id: "sbx-order-1001", event_at: Date.now() - 60_000, email: "runner@example.com", value: 129.9, currency: "USD" } },
  ], { testId: "t2_sandboxtest" });
  expect(sent).toEqual([{ ok: true, status: 200 }]);

  // TikTok: a token from its authorization page, then the client's read-merge-write of the "Everyone" ad group's interests.
  const settings = oauthClientOf(tiktokAds.manifest, sb.env);
  if ("missing" in settings) throw new Error(`the sandbox env lacks ${settings.missing.join(", ")}`);
  const oauth = new OAuth2Client(tiktokAds.manifest as ConstructorParameters<typeof OAuth2Client>[0], settings.client);
  const codeVerifier = oauth.newCodeVerifier();
  const back = await browse(await oauth.authorizationUrl({ redirectUri: REDIRECT, state: "tt-inbox", codeVerifier }));
  const tokens = await oauth.exchangeCode({ code: (back.searchParams.get("auth_code") ?? back.searchParams.get("code"))!, redirectUri: REDIRECT, codeVerifier });
  const ads = tiktokAds.client({ baseUrl: baseUrlOf(tiktokAds.manifest, sb.env), accessToken: tokens.accessToken, env: sb.env });
  const entities = [];
  for (let cursor: string | undefined, pages = 0; pages === 0 || (cursor && pages < 10); pages++) {
    const page = await ads.listEntities("7100000001", { cursor, limit: 50 });
    entities.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  }
  const everyone = entities.find((e) => e.level === "ad_group" && e.name === "Everyone")!;
  const prior = await ads.readTargeting("7100000001", [everyone.id], "interests");
  const change = { id: "chg_inbox", entity_id: everyone.id, field: "interests" as const, op: "add" as const, item: { key: "category:1002", id: "1002", text: "Cycling" }, trend_id: null };
  await ads.run("7100000001", ads.calls("7100000001", [change], prior), { dryRun: true }); // a dry run writes nothing
  expect((await ads.run("7100000001", ads.calls("7100000001", [change], prior), { dryRun: false })).map((r) => r.ok)).toEqual([true]);

  const received = await (await fetch(`${sb.inbox.url}/received.json`)).json() as { conversions: Record<string, unknown>[]; ads_writes: Record<string, unknown>[] };
  expect(received.conversions).toContainEqual({
    at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), pixel_id: "a2_sandbox1", event_type: "PURCHASE", conversion_id: "sbx-order-1001", test_id: "t2_sandboxtest",
  });
  const writes = received.ads_writes.filter((w) => w.provider === "tiktok_ads");
  expect(writes).toEqual([{ provider: "tiktok_ads", at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), entity: `ad group ${everyone.id}`, change: expect.stringContaining("interest_category_ids=[\"1002\"]") }]);
  expect(JSON.stringify(received.conversions)).not.toMatch(/[0-9a-f]{64}/); // no hashed identifiers

  const page = await (await fetch(`${sb.inbox.url}/`)).text();
  expect(page).toMatch(/<h2>Conversion events \(Reddit Ads\) \(\d+\)<\/h2>/);
  expect(page).toContain("<td>sbx-order-1001</td>");
  expect(page).toContain("<td>t2_sandboxtest</td>");
  expect(page).toMatch(/<h2>Ads targeting writes \(\d+\)<\/h2>/);
  expect(page).toContain(`<td>ad group ${everyone.id}</td>`);
}, 60_000);
