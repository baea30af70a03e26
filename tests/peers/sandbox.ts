import crypto from "node:crypto";
import { startGoogleAdsServer } from "./google-ads-server.ts";
import { startTrendsServer } from "./google-trends-server.ts";
import { LINKEDIN_FACETS, startLinkedInAdsServer } from "./linkedin-ads-server.ts";
import { startMetaAdsServer } from "./meta-ads-server.ts";
import { startMicrosoftAdsServer } from "./microsoft-ads-server.ts";
import { startN8nServer } from "./n8n-server.ts";
import { startOAuthPeer } from "./oauth-server.ts";
import { startPinterestAdsServer } from "./pinterest-ads-server.ts";
import { startRedditAdsServer } from "./reddit-ads-server.ts";
import { startRedditServer } from "./reddit-server.ts";
import { startSlackServer } from "./slack-server.ts";
import { startSnapAdsServer } from "./snap-ads-server.ts";
import { startTeamsServer } from "./teams-server.ts";
import { startTikTokAdsServer } from "./tiktok-ads-server.ts";
import { startInboxServer, type InboxAdsWrite, type InboxConversion, type InboxServer } from "./inbox-server.ts";
import { startXServer } from "./x-server.ts";
import { startYouTubeServer } from "./youtube-server.ts";

// Every vendor stand-in on fixed loopback ports (base port + a fixed offset each), seeded with one small believable
// account, with the environment that points the service at them. OAuth providers show the shared consent page
// (consent-page.ts) so a person completes each browser flow; Google's OAuth is the oidc-provider peer on Google's
// paths, and every access token it issues is accepted by the Google Ads stand-in; Microsoft's (Teams) is the same peer
// on the identity platform's paths, its tokens accepted by the Teams stand-in's Graph. Started by `npm run sandbox`
// (scripts/sandbox.ts) and by tests/peers/sandbox.test.ts.

export const SANDBOX_BASE_PORT = 4100;

/** Port offsets from the base port: the table docs/connectors.md "Sandbox" prints. */
export const SANDBOX_PORTS = {
  n8n: 0, slack: 1, reddit_ads: 2, x: 3, reddit_api: 4, reddit_auth: 5, youtube: 6, google_trends: 7,
  google_ads: 8, google_oauth: 9, meta_ads: 10, linkedin_ads: 11, tiktok_ads: 12, microsoft_ads: 13, snap_ads: 14, pinterest_ads: 15,
  inbox: 16, teams: 17, teams_oauth: 18,
} as const;
export type SandboxService = keyof typeof SANDBOX_PORTS;

export interface SandboxEntry { service: SandboxService; port: number; url: string; what: string }

export interface Sandbox {
  basePort: number;
  /** One row per listening stand-in. */
  services: SandboxEntry[];
  /** The variables that point the service at the stand-ins (paste into .env). */
  env: Record<string, string>;
  /** What to send when connecting the connectors that take credentials instead of a browser flow. */
  credentials: { connector: string; how: string }[];
  /** A webhook receiver that verifies signatures, and the page of what every stand-in received. */
  inbox: InboxServer;
  close(): Promise<void>;
}

/** Fixed app credentials, so a restarted sandbox matches the .env written before. */
const app = (name: string, clientId = `sandbox-${name}-client`) => ({ clientId, clientSecret: `sandbox-${name}-secret-0123456789abcdef` });
const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();

/** The days of ads stats seeded per ad group: the last 14, today included, in each account's own time zone. */
export const SANDBOX_STATS_DAYS = 14;

/** YYYY-MM-DD `daysAgo` days before today in `timeZone` (the day an ad account reports in). */
export function sandboxDay(timeZone: string, daysAgo: number, now = new Date()): string {
  const [y, m, d] = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now).split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d - daysAgo)).toISOString().slice(0, 10);
}

/** One ad group's typical day: impressions, click-through rate, cost per click (micros) and conversion rate. */
interface DeliveryProfile { impressions: number; ctr: number; cpcMicros: number; cvr: number }
interface DayOfStats { date: string; impressions: number; clicks: number; spendMicros: number; conversions: number }

/**
 * An ad group's delivery over the last SANDBOX_STATS_DAYS days (oldest first): weekends lower, a slow rise over the
 * fortnight, and +-15 % per day from a hash of `key` and the date, so the same day always has the same numbers (no
 * Math.random). Spend is whole cents, in micros.
 */
function dailyStats(key: string, timeZone: string, p: DeliveryProfile): DayOfStats[] {
  return Array.from({ length: SANDBOX_STATS_DAYS }, (_, i) => {
    const date = sandboxDay(timeZone, SANDBOX_STATS_DAYS - 1 - i);
    const h = crypto.createHash("sha256").update(`${key}|${date}`).digest();
    const jitter = (k: number) => 0.85 + (h.readUInt16BE(k * 2) / 0xffff) * 0.3;
    const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
    const impressions = Math.round(p.impressions * (weekday === 0 || weekday === 6 ? 0.75 : 1) * (0.9 + i * 0.015) * jitter(0));
    const clicks = Math.max(1, Math.round(impressions * p.ctr * jitter(1)));
    const spendMicros = Math.round((clicks * p.cpcMicros * jitter(2)) / 10_000) * 10_000;
    const conversions = Math.round(clicks * p.cvr * jitter(3));
    return { date, impressions, clicks, spendMicros, conversions };
  });
}
/** Micros of a currency with cents as the decimal string most APIs report spend in ("12.34"). */
const decimal = (micros: number) => `${Math.floor(micros / 1_000_000)}.${String(Math.round((micros % 1_000_000) / 10_000)).padStart(2, "0")}`;

export async function startSandbox(opts: { basePort?: number; redirectUris?: string[] } = {}): Promise<Sandbox> {
  const base = opts.basePort ?? SANDBOX_BASE_PORT;
  const port = (s: SandboxService) => base + SANDBOX_PORTS[s];
  const redirectUris = opts.redirectUris ?? ["http://localhost:3000/api/integrations/oauth/callback"];
  const closers: (() => Promise<void>)[] = [];
  const services: SandboxEntry[] = [];
  const env: Record<string, string> = {};
  const add = (service: SandboxService, url: string, what: string) => services.push({ service, port: port(service), url, what });
  let conversionToken = "";
  let inbox: InboxServer | null = null;

  try {
    // ---- workflow, chat, conversions -----------------------------------------------------------------------------
    const n8n = await startN8nServer({ apiKey: "n8n_api_sandbox_0123456789abcdef", port: port("n8n") });
    closers.push(n8n.close);
    n8n.addWorkflow({ name: "Trend alert → HubSpot deal", webhook: { path: "trend-alert" }, tags: ["trends", "crm"] });
    n8n.addWorkflow({ name: "Post rising trends to Notion", webhook: { path: "notion-trends" }, tags: ["trends"] });
    n8n.addWorkflow({ name: "Weekly digest email", webhook: null, tags: ["digest"] });
    n8n.addWorkflow({ name: "Old experiment (inactive)", active: false, webhook: { path: "old-experiment" } });
    add("n8n", n8n.url, "n8n public API + webhooks");
    env.N8N_API_URL = n8n.url;

    const slack = await startSlackServer({ consentPage: true, port: port("slack"), team: { id: "T0SANDBOX01", name: "Acme Marketing (sandbox)" } });
    closers.push(slack.close);
    slack.addChannel({ id: "C0GENERAL01", name: "general", botMember: true });
    slack.addChannel({ id: "C0TRENDS001", name: "trend-alerts", botMember: true });
    slack.addChannel({ id: "C0MKTOPS001", name: "marketing-ops" });
    slack.addChannel({ id: "G0LEADERS01", name: "leadership", isPrivate: true, botMember: true });
    slack.addChannel({ id: "C0OLDCAMP01", name: "campaign-2024", isArchived: true });
    add("slack", slack.url, "Slack Web API + consent page");
    Object.assign(env, { SLACK_CLIENT_ID: slack.app.clientId, SLACK_CLIENT_SECRET: slack.app.clientSecret, SLACK_SIGNING_SECRET: "sandbox-slack-signing-secret-0123456789", SLACK_API_URL: slack.url, SLACK_AUTHORIZE_URL: slack.authorizeUrl });

    // Teams: Graph, the bot's token endpoint, the Bot Framework Connector and its signing keys on one port; the tenant's
    // OAuth (the oidc-provider peer, consent page) on its own. One tenant, one team with the app installed.
    const teamsApp = app("teams");
    const teams = await startTeamsServer({
      port: port("teams"), redirectUris, oauth: { port: port("teams_oauth"), clients: { post: { id: teamsApp.clientId, secret: teamsApp.clientSecret } } },
      app: { id: "00000000-0000-4000-8000-00000000e001", password: "sandbox-teams-bot-password-0123456789abcdef", tenantId: "00000000-0000-4000-8000-00000000e002" },
      tenant: { id: "00000000-0000-4000-8000-00000000e003", displayName: "Acme Outdoor" },
    });
    closers.push(teams.close);
    // Fixed team and channel ids, so a channel saved before a restart is still there after it.
    const team = teams.addTeam({ id: "00000000-0000-4000-8000-00000000e101", displayName: "Acme Marketing (sandbox)", installed: true });
    teams.addChannel(team.id, { id: "19:5a0db0c0000000000000000000000001@thread.tacv2", displayName: "General" });
    teams.addChannel(team.id, { id: "19:5a0db0c0000000000000000000000002@thread.tacv2", displayName: "Trend alerts" });
    teams.addChannel(team.id, { id: "19:5a0db0c0000000000000000000000003@thread.tacv2", displayName: "Marketing ops" });
    teams.addChannel(team.id, { id: "19:5a0db0c0000000000000000000000004@thread.tacv2", displayName: "Leadership", membershipType: "private" });
    teams.addChannel(team.id, { id: "19:5a0db0c0000000000000000000000005@thread.tacv2", displayName: "Campaign 2024", isArchived: true });
    add("teams", teams.url, "Microsoft Graph, bot token endpoint, Bot Framework Connector + signing keys");
    add("teams_oauth", teams.oauth.url, "Microsoft identity platform: the tenant's OAuth consent page");
    // Its TEAMS_* lines (OUTBOUND_ALLOWLIST is set once, below).
    for (const [k, v] of Object.entries(teams.env)) if (k.startsWith("TEAMS_")) env[k] = v;

    const redditAds = await startRedditAdsServer({ consentPage: true, port: port("reddit_ads"), app: app("reddit-ads") });
    closers.push(redditAds.close);
    const conversionAt = arrivals(redditAds.received);
    conversionToken = redditAds.addConversionToken();
    add("reddit_ads", redditAds.url, "Reddit Ads OAuth + Conversions API v3");
    Object.assign(env, { REDDIT_ADS_CLIENT_ID: redditAds.app.clientId, REDDIT_ADS_CLIENT_SECRET: redditAds.app.clientSecret, REDDIT_ADS_API_URL: redditAds.url, REDDIT_ADS_AUTHORIZE_URL: redditAds.authorizeUrl, REDDIT_ADS_TOKEN_URL: redditAds.tokenUrl });

    // ---- social and search ---------------------------------------------------------------------------------------
    const x = await startXServer({ port: port("x") });
    closers.push(x.close);
    x.addAppToken("x-sandbox-bearer-token");
    x.addUserToken("x-sandbox-user-token", "1500000000000000001");
    x.setData({
      users: [{ id: "1500000000000000001", name: "Acme Outdoor", username: "acmeoutdoor" }, { id: "1500000000000000002", name: "Trail Weekly", username: "trailweekly" }],
      posts: [
        { id: "1860000000000000001", text: "Trail running shoes with recycled soles are everywhere this week", author_id: "1500000000000000002", created_at: hoursAgo(2), public_metrics: { retweet_count: 40, reply_count: 12, like_count: 310, quote_count: 5 } },
        { id: "1860000000000000002", text: "Anyone else switching to trail running this spring?", author_id: "1500000000000000002", created_at: hoursAgo(5), public_metrics: { retweet_count: 8, reply_count: 30, like_count: 95, quote_count: 1 } },
        { id: "1860000000000000003", text: "Our new ultralight trail running vest is out", author_id: "1500000000000000001", created_at: hoursAgo(20), public_metrics: { retweet_count: 15, reply_count: 4, like_count: 120, quote_count: 2 } },
      ],
    });
    add("x", `${x.url}/2`, "X API v2 (recent search, replies)");
    env.SOCIAL_X_BASE_URL = `${x.url}/2`;

    const reddit = await startRedditServer({ ports: { api: port("reddit_api"), auth: port("reddit_auth") } });
    closers.push(reddit.close);
    reddit.registerApp("sandbox-reddit-app", "sandbox-reddit-secret");
    const now = Math.floor(Date.now() / 1000);
    reddit.setPosts([
      { id: "1abc01", subreddit: "trailrunning", title: "Trail running shoes: what are you wearing this season?", score: 420, num_comments: 133, created_utc: now - 3600 },
      { id: "1abc02", subreddit: "trailrunning", title: "First ultra on trail running shoes with rock plates", score: 88, num_comments: 21, created_utc: now - 7200 },
      { id: "1abc03", subreddit: "running", title: "Road vs trail running for beginners", score: 150, num_comments: 64, created_utc: now - 14_400 },
    ]);
    add("reddit_api", reddit.apiUrl, "Reddit API (oauth.reddit.com)");
    add("reddit_auth", reddit.authUrl, "Reddit token host (www.reddit.com)");
    Object.assign(env, { SOCIAL_REDDIT_BASE_URL: reddit.apiUrl, SOCIAL_REDDIT_AUTH_URL: reddit.authUrl });

    const youtube = await startYouTubeServer({ apiKey: "yt-sandbox-api-key", port: port("youtube") });
    closers.push(youtube.close);
    youtube.setVideos([
      { id: "sbxVideo001", title: "Trail running shoes review 2026", channelTitle: "Trail Weekly", publishedAt: hoursAgo(6), viewCount: 48_000, likeCount: 2_100, commentCount: 310 },
      { id: "sbxVideo002", title: "How to start trail running", channelTitle: "Acme Outdoor", publishedAt: hoursAgo(30), viewCount: 12_500, likeCount: 640, commentCount: 45 },
    ]);
    add("youtube", youtube.baseUrl, "YouTube Data API v3");
    env.SOCIAL_YOUTUBE_BASE_URL = youtube.baseUrl;

    const trends = await startTrendsServer({ token: "trends-sandbox-token", port: port("google_trends") });
    closers.push(trends.close);
    const day = (d: number) => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - d)).toISOString();
    // Rising over the last week against a flat month: a validation confirms the momentum.
    trends.setSeries("trail running", Array.from({ length: 40 }, (_, i) => ({ time: day(39 - i), searchInterest: i < 33 ? 30 + (i % 3) : 45 + (i - 33) * 6 })));
    trends.setSeries("road running", Array.from({ length: 40 }, (_, i) => ({ time: day(39 - i), searchInterest: 50 + (i % 4) })));
    add("google_trends", trends.baseUrl, "Google Trends API (alpha)");
    env.SOCIAL_GOOGLE_TRENDS_BASE_URL = trends.baseUrl;

    // ---- ads -----------------------------------------------------------------------------------------------------
    const google = await startGoogleAdsServer({ port: port("google_ads") });
    closers.push(google.close);
    const customer = google.addCustomer({ id: "1234567890", descriptiveName: "Acme Outdoor (sandbox)", testAccount: true });
    const search = google.addCampaign({ customerId: customer.id, name: "Search: running shoes" });
    const trail = google.addAdGroup({ campaignId: search.id, name: "Trail running" });
    const road = google.addAdGroup({ campaignId: search.id, name: "Road running" });
    google.addKeyword({ adGroupId: trail.id, text: "trail running shoes", matchType: "PHRASE" });
    google.addKeyword({ adGroupId: trail.id, text: "cheap", negative: true });
    google.addKeyword({ adGroupId: road.id, text: "road running shoes", matchType: "PHRASE" });
    // Daily stats per ad group (each gets one responsive search ad), in Google's units: cost in micros, the customer's days.
    for (const [g, p] of [[trail, { impressions: 1800, ctr: 0.045, cpcMicros: 1_100_000, cvr: 0.06 }], [road, { impressions: 2400, ctr: 0.035, cpcMicros: 850_000, cvr: 0.04 }]] as const) {
      for (const d of dailyStats(`google:${g.id}`, customer.timeZone, p)) {
        google.addStats({ adGroupId: g.id, date: d.date, impressions: d.impressions, clicks: d.clicks, costMicros: d.spendMicros, conversions: d.conversions });
      }
    }
    add("google_ads", google.url, "Google Ads API REST (v25)");
    const googleOAuth = await startOAuthPeer({
      redirectUris, port: port("google_oauth"), provider: "Google", scopes: ["https://www.googleapis.com/auth/adwords"],
      routes: { authorization: "/o/oauth2/v2/auth", token: "/token", revocation: "/revoke" },
      clients: { post: { id: "sandbox-google-client.apps.googleusercontent.com", secret: "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6789" } },
      // Google keeps the refresh token (no rotation) and leaves it out of refresh answers.
      rotateRefreshTokens: false, refreshAnswersOmitRefreshToken: true,
      onAccessToken: (token) => google.addToken(token),
      grants: () => [`Google Ads customer ${customer.id} (${customer.descriptiveName})`],
    });
    closers.push(googleOAuth.close);
    add("google_oauth", googleOAuth.url, "Google OAuth (accounts.google.com + oauth2.googleapis.com paths)");
    Object.assign(env, {
      GOOGLE_ADS_CLIENT_ID: googleOAuth.clients.post.id, GOOGLE_ADS_CLIENT_SECRET: googleOAuth.clients.post.secret, GOOGLE_ADS_API_URL: google.url,
      GOOGLE_ADS_AUTHORIZE_URL: googleOAuth.authorizationUrl, GOOGLE_ADS_TOKEN_URL: googleOAuth.tokenUrl, GOOGLE_ADS_REVOKE_URL: googleOAuth.revocationUrl,
    });

    const meta = await startMetaAdsServer({ port: port("meta_ads"), app: app("meta", "1000000000000001") });
    closers.push(meta.close);
    const metaAt = arrivals(meta.writes);
    meta.addAdAccount({ id: "act_1000000001", name: "Acme Outdoor US" });
    const spring = meta.addCampaign({ accountId: "1000000001", name: "Spring trail collection" });
    meta.addAdSet("120200000000000001", { accountId: "1000000001", campaignId: spring.id, name: "Runners US/CA 25-45", targeting: { geo_locations: { countries: ["US", "CA"] }, age_min: 25, age_max: 45, flexible_spec: [{ interests: [{ id: "6003107902433", name: "Running" }] }] } });
    meta.addAdSet("120200000000000002", { accountId: "1000000001", campaignId: spring.id, name: "Everyone UK", targeting: { geo_locations: { countries: ["GB"] }, age_min: 18, age_max: 65 } });
    // Insights rows per ad and account day (Los Angeles), as Meta stores them: spend a decimal string, purchases in `actions`.
    const metaAds = [
      { adsetId: "120200000000000001", adsetName: "Runners US/CA 25-45", adId: "120210000000000001", adName: "Trail vest carousel", p: { impressions: 9000, ctr: 0.014, cpcMicros: 620_000, cvr: 0.035 } },
      { adsetId: "120200000000000002", adsetName: "Everyone UK", adId: "120210000000000002", adName: "Spring collection video", p: { impressions: 12_000, ctr: 0.009, cpcMicros: 480_000, cvr: 0.02 } },
    ];
    for (const a of metaAds) {
      meta.addStats(...dailyStats(`meta:${a.adId}`, "America/Los_Angeles", a.p).map((d) => ({
        accountId: "1000000001", date: d.date, campaignId: spring.id, campaignName: spring.name, adsetId: a.adsetId, adsetName: a.adsetName, adId: a.adId, adName: a.adName,
        impressions: String(d.impressions), clicks: String(d.clicks), inlineLinkClicks: String(Math.round(d.clicks * 0.7)), spend: decimal(d.spendMicros),
        actions: [
          { action_type: "link_click", value: String(Math.round(d.clicks * 0.7)) },
          ...(d.conversions ? [{ action_type: "offsite_conversion.fb_pixel_purchase", value: String(d.conversions) }, { action_type: "purchase", value: String(d.conversions) }] : []),
        ],
      })));
    }
    add("meta_ads", meta.url, "Meta Graph API (Marketing) + OAuth dialog");
    Object.assign(env, { META_ADS_CLIENT_ID: meta.app.clientId, META_ADS_CLIENT_SECRET: meta.app.clientSecret, META_ADS_API_URL: meta.url, META_ADS_AUTHORIZE_URL: meta.authorizeUrl, META_ADS_TOKEN_URL: meta.tokenUrl });

    const linkedin = await startLinkedInAdsServer({ port: port("linkedin_ads"), app: app("linkedin") });
    closers.push(linkedin.close);
    const linkedinAt = arrivals(linkedin.writes);
    linkedin.addAccount({ id: "508000001", name: "Acme Outdoor" });
    const lGroup = linkedin.addGroup({ account: "508000001", name: "Employer brand" });
    const F = LINKEDIN_FACETS;
    const engineers = linkedin.addCampaign({ account: "508000001", group: lGroup.id, name: "Engineers US", targetingCriteria: { include: { and: [{ or: { [F.locations]: ["urn:li:geo:103644278"] } }, { or: { [F.interests]: ["urn:li:interest:1001"] } }] } } });
    const everyoneUk = linkedin.addCampaign({ account: "508000001", group: lGroup.id, name: "Everyone UK", targetingCriteria: { include: { and: [{ or: { [F.locations]: ["urn:li:geo:101165590"] } }] } } });
    // One creative per campaign, its daily stats in LinkedIn's units: cost a decimal string, UTC days.
    for (const [c, name, p] of [[engineers, "Engineering careers video", { impressions: 1600, ctr: 0.0065, cpcMicros: 6_400_000, cvr: 0.09 }], [everyoneUk, "Why Acme image", { impressions: 2200, ctr: 0.005, cpcMicros: 5_100_000, cvr: 0.05 }]] as const) {
      const creative = linkedin.addCreative({ account: "508000001", campaign: c.id, name });
      linkedin.addStats(dailyStats(`linkedin:${creative.id}`, "UTC", p).map((d) => ({ creative: creative.id, date: d.date, impressions: d.impressions, clicks: d.clicks, costInLocalCurrency: decimal(d.spendMicros), externalWebsiteConversions: d.conversions })));
    }
    add("linkedin_ads", linkedin.url, "LinkedIn Marketing API (Rest.li 2.0) + OAuth");
    Object.assign(env, { LINKEDIN_ADS_CLIENT_ID: linkedin.app.clientId, LINKEDIN_ADS_CLIENT_SECRET: linkedin.app.clientSecret, LINKEDIN_ADS_API_URL: linkedin.url, LINKEDIN_ADS_AUTHORIZE_URL: linkedin.authorizeUrl, LINKEDIN_ADS_TOKEN_URL: linkedin.tokenUrl, LINKEDIN_ADS_API_VERSION: linkedin.version });

    const tiktok = await startTikTokAdsServer({ port: port("tiktok_ads"), app: app("tiktok", "7000000000001") });
    closers.push(tiktok.close);
    const tiktokAt = arrivals(tiktok.writes);
    tiktok.addAdvertiser({ advertiserId: "7100000001", name: "Acme Outdoor", currency: "USD", timezone: "Etc/GMT+8", displayTimezone: "America/Los_Angeles" });
    const tCampaign = tiktok.addCampaign({ advertiserId: "7100000001", name: "Spring trail collection" });
    const outdoor = tiktok.addAdGroup({ advertiserId: "7100000001", campaignId: tCampaign.campaign_id, name: "Outdoor lovers", interestCategoryIds: ["30"], locationIds: ["6252001"] });
    const everyone = tiktok.addAdGroup({ advertiserId: "7100000001", campaignId: tCampaign.campaign_id, name: "Everyone" });
    // One ad per ad group, its daily stats as TikTok stores them: spend a decimal string, the advertiser's days.
    for (const [g, id, name, p] of [[outdoor, "1800000000000001", "Trail run POV video", { impressions: 15_000, ctr: 0.011, cpcMicros: 350_000, cvr: 0.025 }], [everyone, "1800000000000002", "Spring drop video", { impressions: 21_000, ctr: 0.008, cpcMicros: 290_000, cvr: 0.015 }]] as const) {
      const ad = tiktok.addAd({ advertiserId: "7100000001", adgroupId: g.adgroup_id, name, id });
      for (const d of dailyStats(`tiktok:${ad.ad_id}`, "America/Los_Angeles", p)) tiktok.addStats({ adId: ad.ad_id, date: d.date, impressions: d.impressions, clicks: d.clicks, spend: decimal(d.spendMicros), conversion: d.conversions });
    }
    add("tiktok_ads", tiktok.url, "TikTok API for Business + advertiser authorization");
    Object.assign(env, { TIKTOK_ADS_CLIENT_ID: tiktok.app.appId, TIKTOK_ADS_CLIENT_SECRET: tiktok.app.secret, TIKTOK_ADS_API_URL: tiktok.url, TIKTOK_ADS_AUTHORIZE_URL: tiktok.authorizeUrl, TIKTOK_ADS_TOKEN_URL: tiktok.tokenUrl, TIKTOK_ADS_REVOKE_URL: tiktok.revokeUrl });

    const microsoft = await startMicrosoftAdsServer({ port: port("microsoft_ads"), app: app("microsoft", "00000000-0000-4000-8000-00000000a001"), developerToken: "SANDBOXDEVTOKEN01" });
    closers.push(microsoft.close);
    const msAccount = microsoft.addAccount({ customerId: "251000001", id: "180000001", name: "Acme Outdoor" });
    const brand = microsoft.addCampaign({ accountId: msAccount.id, name: "Search: running" });
    const msTrail = microsoft.addAdGroup({ campaignId: brand.id, name: "Trail running" });
    const msRoad = microsoft.addAdGroup({ campaignId: brand.id, name: "Road running" });
    microsoft.addKeyword({ adGroupId: msTrail.id, text: "trail running shoes", matchType: "Phrase" });
    // Daily stats per ad group (its default ad), in Microsoft's units: spend a decimal string, the account's days (Pacific).
    for (const [g, p] of [[msTrail, { impressions: 700, ctr: 0.05, cpcMicros: 900_000, cvr: 0.07 }], [msRoad, { impressions: 950, ctr: 0.04, cpcMicros: 700_000, cvr: 0.05 }]] as const) {
      microsoft.addStats(dailyStats(`microsoft:${g.id}`, "America/Los_Angeles", p).map((d) => ({ adGroupId: g.id, date: d.date, impressions: d.impressions, clicks: d.clicks, spend: decimal(d.spendMicros), conversions: d.conversions })));
    }
    add("microsoft_ads", microsoft.url, "Microsoft Advertising API v13 REST + OAuth");
    Object.assign(env, { MICROSOFT_ADS_CLIENT_ID: microsoft.app.clientId, MICROSOFT_ADS_CLIENT_SECRET: microsoft.app.clientSecret, MICROSOFT_ADS_DEVELOPER_TOKEN: microsoft.developerToken, MICROSOFT_ADS_API_URL: microsoft.url, MICROSOFT_ADS_AUTHORIZE_URL: microsoft.authorizeUrl, MICROSOFT_ADS_TOKEN_URL: microsoft.tokenUrl });

    const snap = await startSnapAdsServer({ port: port("snap_ads"), app: app("snap", "00000000-0000-4000-8000-00000000b001") });
    closers.push(snap.close);
    const snapAt = arrivals(snap.writes);
    const snapAccount = snap.addAdAccount({ id: "00000000-0000-4000-8000-00000000c001", name: "Acme Outdoor" });
    const sCampaign = snap.addCampaign({ adAccountId: snapAccount.id, name: "Spring trail collection" });
    const fansUs = snap.addAdSquad({ campaignId: sCampaign.id, name: "Outdoor fans US", targeting: { geos: [{ country_code: "us" }], demographics: [{ min_age: 18, max_age: 34 }], interests: [{ category_id: ["SLC_23"] }] } });
    const snapUk = snap.addAdSquad({ campaignId: sCampaign.id, name: "Everyone UK", targeting: { geos: [{ country_code: "gb" }] } });
    // One ad per ad squad, its daily stats in Snap's units: spend in integer micros, swipes, the account's days (Los Angeles).
    for (const [sq, id, name, p] of [[fansUs, "00000000-0000-4000-8000-00000000d001", "Trail vest story", { impressions: 11_000, ctr: 0.007, cpcMicros: 400_000, cvr: 0.02 }], [snapUk, "00000000-0000-4000-8000-00000000d002", "Spring drop story", { impressions: 8000, ctr: 0.006, cpcMicros: 380_000, cvr: 0.015 }]] as const) {
      const ad = snap.addAd({ adSquadId: sq.id, name, id });
      for (const d of dailyStats(`snap:${ad.id}`, snapAccount.timezone, p)) snap.addStats({ adId: ad.id, date: d.date, impressions: d.impressions, swipes: d.clicks, spend: d.spendMicros, conversion_purchases: d.conversions });
    }
    add("snap_ads", snap.url, "Snap Marketing API + OAuth");
    Object.assign(env, { SNAP_ADS_CLIENT_ID: snap.app.clientId, SNAP_ADS_CLIENT_SECRET: snap.app.clientSecret, SNAP_ADS_API_URL: snap.url, SNAP_ADS_AUTHORIZE_URL: snap.authorizeUrl, SNAP_ADS_TOKEN_URL: snap.tokenUrl });

    const pinterest = await startPinterestAdsServer({ port: port("pinterest_ads"), app: app("pinterest", "1500001") });
    closers.push(pinterest.close);
    pinterest.addAdAccount({ id: "549755885175", name: "Acme Outdoor" });
    const pCampaign = pinterest.addCampaign({ adAccountId: "549755885175", name: "Spring trail collection" });
    const pGroup = pinterest.addAdGroup({ adAccountId: "549755885175", campaignId: pCampaign.id, name: "Outdoor decor lovers", targetingSpec: { LOCATION: ["US", "CA"], MINIMUM_AGE: "25", MAXIMUM_AGE: "54", LOCALE: ["en"] } });
    pinterest.addKeyword(pGroup.id, { value: "trail running outfit", matchType: "PHRASE" });
    // Two pins promoted in the ad group, their daily stats in Pinterest's columns: spend in micro-units, UTC days.
    for (const [id, name, p] of [["687195100001", "Trail outfit pin", { impressions: 6000, ctr: 0.009, cpcMicros: 700_000, cvr: 0.03 }], ["687195100002", "Vest flat lay pin", { impressions: 4500, ctr: 0.011, cpcMicros: 650_000, cvr: 0.025 }]] as const) {
      const ad = pinterest.addAd({ adAccountId: "549755885175", adGroupId: pGroup.id, name, id });
      for (const d of dailyStats(`pinterest:${ad.id}`, "UTC", p)) pinterest.addStats({ adId: ad.id, date: d.date, IMPRESSION_1: d.impressions, CLICKTHROUGH_1: d.clicks, SPEND_IN_MICRO_DOLLAR: d.spendMicros, TOTAL_CONVERSIONS: d.conversions });
    }
    add("pinterest_ads", pinterest.url, "Pinterest API v5 + OAuth");
    Object.assign(env, { PINTEREST_ADS_CLIENT_ID: pinterest.app.clientId, PINTEREST_ADS_CLIENT_SECRET: pinterest.app.clientSecret, PINTEREST_ADS_API_URL: pinterest.url, PINTEREST_ADS_AUTHORIZE_URL: pinterest.authorizeUrl, PINTEREST_ADS_TOKEN_URL: pinterest.tokenUrl });

    // ---- what they received --------------------------------------------------------------------------------------
    const slackChannels = ["C0GENERAL01", "C0TRENDS001", "C0MKTOPS001", "G0LEADERS01"];
    inbox = await startInboxServer({
      port: port("inbox"),
      sources: {
        n8nPushes: () => n8n.pushes.map((p) => ({ at: p.at.toISOString(), path: p.path, event: (p.body as { event?: string })?.event ?? null, body: p.body })),
        slackMessages: () => slackChannels.flatMap((c) => slack.messages(c).map((m) => ({ channel: c, ts: m.ts, text: m.text, thread_ts: m.threadTs }))),
        // Each card thread the bot started (its latest version) and its replies, named as the connector lists channels.
        teamsMessages: () => [...teams.threads.values()].flatMap((t) => {
          const channel = team.channels.find((c) => c.id === t.channelId);
          const where = { channel: channel ? `${team.displayName} / ${channel.displayName}` : t.channelId, conversation_id: t.conversationId };
          const text = (a: { summary?: unknown; text?: unknown }) => String(a.summary ?? a.text ?? "");
          return [
            { ...where, activity_id: t.activityId, reply_to: null, text: text(t.activity), updates: t.edits.length },
            ...t.replies.map((r) => ({ ...where, activity_id: r.id, reply_to: t.activityId, text: text(r.activity), updates: 0 })),
          ];
        }),
        conversions: () => redditAds.received.map((r): InboxConversion => ({
          at: conversionAt(r), pixel_id: r.pixelId, conversion_id: String(r.event.metadata?.conversion_id ?? ""), test_id: r.testId,
          event_type: [r.event.type?.tracking_type, r.event.type?.custom_event_name].filter(Boolean).join(": "),
        })),
        adsWrites: () => [
          ...google.requests.filter((r) => r.method === "POST" && r.path.endsWith("/adGroupCriteria:mutate") && r.status === 200 && !r.body?.validateOnly)
            .flatMap((r) => (r.body.operations as Record<string, any>[]).map((op) => ({ provider: "google_ads", at: r.at.toISOString(), ...googleOperation(op) }))),
          ...meta.writes.filter((w) => w.ok && !w.validateOnly).map((w) => ({ provider: "meta_ads", at: metaAt(w), entity: `ad set ${w.adsetId}`, change: fields(w.params, ["execution_options"]) })),
          ...linkedin.writes.filter((w) => w.ok).map((w) => ({ provider: "linkedin_ads", at: linkedinAt(w), entity: `campaign ${w.campaignId}`, change: fields(w.set) })),
          ...tiktok.writes.filter((w) => w.ok).map((w) => ({ provider: "tiktok_ads", at: tiktokAt(w), entity: `ad group ${w.adgroupId}`, change: fields(w.body, ["advertiser_id", "adgroup_id"]) })),
          ...microsoft.requests.filter((r) => r.op === "Keywords" && (r.method === "POST" || r.method === "DELETE") && r.status === 200).map((r) => ({
            provider: "microsoft_ads", at: new Date(r.at).toISOString(), entity: `ad group ${r.body?.AdGroupId}`,
            change: r.method === "POST" ? `add keywords ${(r.body.Keywords as { Text: string; MatchType: string }[]).map((k) => `"${k.Text}" ${k.MatchType}`).join(", ")}` : `delete keywords ${(r.body.KeywordIds as unknown[]).join(", ")}`,
          })),
          ...snap.writes.filter((w) => w.ok).map((w) => ({ provider: "snap_ads", at: snapAt(w), entity: `ad squad ${w.adsquad.id}`, change: `${w.method} ${fields(w.adsquad, ["id"])}` })),
          ...pinterest.requests.filter((r) => r.status === 200 && /^\/v5\/ad_accounts\/[^/]+\/(ad_groups|keywords)$/.test(r.path) && (r.method === "PATCH" || r.method === "POST") && !(r.path.endsWith("ad_groups") && r.method === "POST"))
            .flatMap((r) => pinterestWrite(r.path, r.method, r.body as any).map((w) => ({ provider: "pinterest_ads", at: new Date(r.at).toISOString(), ...w }))),
        ].sort((a, b) => a.at.localeCompare(b.at)),
      },
    });
    closers.push(inbox.close);
    add("inbox", inbox.url, "webhook receiver (verifies signatures) + the page of what every stand-in received");
  } catch (e) {
    for (const close of closers.reverse()) await close().catch(() => {});
    throw e;
  }

  // Every stand-in is on loopback, which the outbound guard refuses unless allowed.
  env.OUTBOUND_ALLOWLIST = "127.0.0.1";
  return {
    basePort: base,
    services: services.sort((a, b) => a.port - b.port),
    env,
    credentials: [
      { connector: "n8n", how: `POST /api/integrations/workflow/connect {"api_base_url": "${env.N8N_API_URL}", "api_key": "n8n_api_sandbox_0123456789abcdef"}` },
      { connector: "reddit_ads", how: `browser OAuth (GET /api/integrations/community-ads/auth), or PUT /api/integrations/community-ads/token {"access_token": "${conversionToken}"} (a conversion token, new each start); pixel ids look like a2_sandbox1` },
      { connector: "x", how: `PUT /api/integrations/social/x/connection {"credentials": {"bearer_token": "x-sandbox-bearer-token", "user_token": "x-sandbox-user-token"}, "terms": ["trail running"]}` },
      { connector: "reddit", how: `PUT /api/integrations/social/reddit/connection {"credentials": {"client_id": "sandbox-reddit-app", "client_secret": "sandbox-reddit-secret"}, "terms": ["trail running"], "options": {"subreddits": ["trailrunning", "running"], "user_agent": "web:trendgate-sandbox:1.0 (by /u/sandbox)"}}` },
      { connector: "youtube", how: `PUT /api/integrations/social/youtube/connection {"credentials": {"api_key": "yt-sandbox-api-key"}, "terms": ["trail running"]}` },
      { connector: "google_trends", how: `PUT /api/integrations/social/google_trends/connection {"credentials": {"access_token": "trends-sandbox-token"}, "terms": ["trail running"]}` },
    ],
    inbox: inbox!,
    async close() { for (const close of closers.reverse()) await close(); },
  };
}

// ---- what the ads and conversion stand-ins received, for the inbox page ----------------------------------------------

/** Their logs carry no arrival time: note when each record is pushed, so the page can show it. */
function arrivals<T extends object>(log: T[]): (record: T) => string {
  const seen = new WeakMap<T, string>();
  const push = log.push.bind(log);
  log.push = (...items: T[]) => {
    const now = new Date().toISOString();
    for (const item of items) seen.set(item, now);
    return push(...items);
  };
  return (record) => seen.get(record) ?? "";
}

/** A value on one short line (the page stays compact; /received.json has the same short form). */
const brief = (v: unknown) => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 160 ? `${s.slice(0, 159)}…` : s;
};
const fields = (o: Record<string, unknown>, skip: string[] = []) =>
  Object.entries(o).filter(([k]) => !skip.includes(k)).map(([k, v]) => `${k}=${brief(v)}`).join("; ");

/** One adGroupCriteria operation: its ad group (from the criterion's resource name or the created one's adGroup). */
function googleOperation(op: Record<string, any>): Pick<InboxAdsWrite, "entity" | "change"> {
  const resource = String(op.create?.adGroup ?? op.update?.resourceName ?? op.remove ?? "");
  const adGroup = /adGroups\/(\d+)/.exec(resource)?.[1] ?? /adGroupCriteria\/(\d+)~/.exec(resource)?.[1] ?? resource;
  const kw = op.create?.keyword;
  const change = kw ? `add ${op.create.negative ? "negative " : ""}keyword "${kw.text}"${kw.matchType ? ` ${kw.matchType}` : ""}`
    : op.create ? `add ${brief(op.create)}` : op.update ? `update ${brief(op.update)}` : `remove ${resource}`;
  return { entity: `ad group ${adGroup}`, change };
}

/** A Pinterest write: each ad group of a PATCH .../ad_groups, or the keywords a POST adds / a PATCH updates. */
function pinterestWrite(path: string, method: string, body: any): Pick<InboxAdsWrite, "entity" | "change">[] {
  if (path.endsWith("/ad_groups")) return (Array.isArray(body) ? body : []).map((g: Record<string, unknown>) => ({ entity: `ad group ${g.id}`, change: fields(g, ["id"]) }));
  const account = /ad_accounts\/([^/]+)/.exec(path)?.[1];
  if (method === "POST") return [{ entity: `ad group ${body?.parent_id}`, change: `add keywords ${((body?.keywords ?? []) as { value: string; match_type?: string }[]).map((k) => `"${k.value}"${k.match_type ? ` ${k.match_type}` : ""}`).join(", ")}` }];
  return [{ entity: `ad account ${account}`, change: `update keywords ${brief(body)}` }];
}

/** The environment as .env lines, with a header saying where it came from. */
export function sandboxEnvText(sb: Sandbox): string {
  return [
    `# Trendgate sandbox (npm run sandbox): every provider points at a local stand-in on 127.0.0.1:${sb.basePort}..${sb.basePort + Object.keys(SANDBOX_PORTS).length - 1}.`,
    "# OUTBOUND_ALLOWLIST must admit 127.0.0.1: merge it with yours if you have one.",
    ...Object.entries(sb.env).map(([k, v]) => `${k}=${v}`),
    "",
  ].join("\n");
}
