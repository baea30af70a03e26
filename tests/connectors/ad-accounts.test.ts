import { registry } from "@trendgate/connectors";
import type { AdsClient } from "@trendgate/connector-ads";
import { startGoogleAdsServer } from "../peers/google-ads-server.ts";
import { startLinkedInAdsServer } from "../peers/linkedin-ads-server.ts";
import { startMetaAdsServer } from "../peers/meta-ads-server.ts";
import { startMicrosoftAdsServer } from "../peers/microsoft-ads-server.ts";
import { startPinterestAdsServer } from "../peers/pinterest-ads-server.ts";
import { startSnapAdsServer } from "../peers/snap-ads-server.ts";
import { startTikTokAdsServer } from "../peers/tiktok-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// Each ads connector lists the ad accounts a token reaches through its provider's own listing (what lets a selection
// leave account_id out), against the provider's local stand-in: a token sees exactly its accounts, each id in the
// form a selection's account_id takes.

interface Case {
  provider: string;
  /** Starts the stand-in with two ad accounts; `one` reaches the first only, `both` reaches both. */
  start(): Promise<{ baseUrl: string; env: Record<string, string>; ids: [string, string]; one: string; both: string; close(): Promise<void> }>;
}

const cases: Case[] = [
  {
    provider: "google_ads",
    async start() {
      const g = await startGoogleAdsServer();
      const [a, b] = [g.addCustomer(), g.addCustomer()];
      g.addToken("one", { customers: [a.id] });
      g.addToken("both", { customers: [a.id, b.id] });
      return { baseUrl: g.url, env: {}, ids: [a.id, b.id], one: "one", both: "both", close: () => g.close() };
    },
  },
  {
    provider: "meta_ads",
    async start() {
      const m = await startMetaAdsServer();
      m.addAdAccount({ id: "700000001", name: "First" });
      m.addAdAccount({ id: "700000002", name: "Second" });
      m.addToken("one", { accounts: ["700000001"] });
      m.addToken("both", { accounts: ["700000001", "700000002"] });
      return { baseUrl: m.url, env: {}, ids: ["act_700000001", "act_700000002"], one: "one", both: "both", close: () => m.close() };
    },
  },
  {
    provider: "tiktok_ads",
    async start() {
      const t = await startTikTokAdsServer();
      for (const id of ["7200000001", "7200000002"]) t.addAdvertiser({ advertiserId: id, currency: "USD", timezone: "Etc/GMT" });
      t.addToken("one", { advertisers: ["7200000001"] });
      t.addToken("both", { advertisers: ["7200000001", "7200000002"] });
      return { baseUrl: t.url, env: { TIKTOK_ADS_CLIENT_ID: t.app.appId, TIKTOK_ADS_CLIENT_SECRET: t.app.secret }, ids: ["7200000001", "7200000002"], one: "one", both: "both", close: () => t.close() };
    },
  },
  {
    provider: "linkedin_ads",
    async start() {
      const l = await startLinkedInAdsServer();
      l.addAccount({ id: "510000001", name: "First" });
      l.addAccount({ id: "510000002", name: "Second" });
      l.addToken("one", { accounts: { 510000001: "VIEWER" } });
      l.addToken("both", { accounts: { 510000001: "CAMPAIGN_MANAGER", 510000002: "ACCOUNT_MANAGER" } });
      return { baseUrl: l.url, env: {}, ids: ["510000001", "510000002"], one: "one", both: "both", close: () => l.close() };
    },
  },
  {
    provider: "microsoft_ads",
    async start() {
      const ms = await startMicrosoftAdsServer();
      const [a, b] = [ms.addAccount({ customerId: "251000001", name: "First" }), ms.addAccount({ customerId: "251000002", name: "Second" })];
      ms.addToken("one", { accounts: [a.id] });
      ms.addToken("both", { accounts: [a.id, b.id] });
      return {
        baseUrl: ms.url, env: { MICROSOFT_ADS_DEVELOPER_TOKEN: ms.developerToken }, ids: [`251000001:${a.id}`, `251000002:${b.id}`], one: "one", both: "both", close: () => ms.close(),
      };
    },
  },
  {
    provider: "snap_ads",
    async start() {
      const s = await startSnapAdsServer();
      const [a, b] = [s.addAdAccount({ name: "First" }), s.addAdAccount({ name: "Second" })];
      s.addToken("one", { accounts: [a.id] });
      s.addToken("both", { accounts: [a.id, b.id] });
      return { baseUrl: s.url, env: {}, ids: [a.id, b.id], one: "one", both: "both", close: () => s.close() };
    },
  },
  {
    provider: "pinterest_ads",
    async start() {
      const p = await startPinterestAdsServer();
      p.addAdAccount({ id: "549000001", name: "First" });
      p.addAdAccount({ id: "549000002", name: "Second" });
      p.addToken("one", { accounts: ["549000001"] });
      p.addToken("both", { accounts: ["549000001", "549000002"] });
      return { baseUrl: p.url, env: {}, ids: ["549000001", "549000002"], one: "one", both: "both", close: () => p.close() };
    },
  },
];

test("every ads provider has a case here", () => {
  expect(cases.map((c) => c.provider).sort()).toEqual(registry.ofKind("ads").map((c) => c.manifest.id).sort());
});

test.each(cases)("$provider lists exactly the ad accounts the token reaches, as account_id takes them", async (c) => {
  const peer = await c.start();
  try {
    const connector = registry.find("ads", c.provider)!;
    const client = (token: string): AdsClient => connector.client({ baseUrl: peer.baseUrl, accessToken: token, env: peer.env });
    expect((await client(peer.one).listAccounts()).map((a) => a.id)).toEqual([peer.ids[0]]);
    expect((await client(peer.both).listAccounts()).map((a) => a.id).sort()).toEqual([...peer.ids].sort());
  } finally {
    await peer.close();
  }
});
