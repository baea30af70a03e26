import { oauthClientOf, ProviderError } from "@trendgate/connector-core";
import { linkedinAds, microsoftAds, tiktokAds } from "@trendgate/connector-ads";
import type { OutboundResult } from "@trendgate/delivery";
import { readQuota, toProviderError } from "../../packages/connectors/social/src/x/http.ts";
import { PUBLISHED_VERSIONS, startLinkedInAdsServer } from "../peers/linkedin-ads-server.ts";
import { startMicrosoftAdsServer } from "../peers/microsoft-ads-server.ts";

// Small provider fixes, one block each: TikTok's OAuth URLs follow its configured API version, Microsoft's reporting
// sends account ids as longs (digits), the LinkedIn stand-in serves only versions LinkedIn released, and X's 24-hour
// posting caps are read.

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

describe("TikTok", () => {
  const app = { TIKTOK_ADS_CLIENT_ID: "7000000000000000001", TIKTOK_ADS_CLIENT_SECRET: "tt-secret" };
  const urls = (env: Record<string, string>) => {
    const r = oauthClientOf(tiktokAds.manifest, env);
    if (!("client" in r)) throw new Error(`missing ${r.missing.join(", ")}`);
    return [r.client.tokenUrl, r.client.revocationUrl];
  };

  test("the token and revocation URLs name TIKTOK_ADS_API_VERSION, as the API calls do", () => {
    expect(urls(app)).toEqual([
      "https://business-api.tiktok.com/open_api/v1.3/oauth2/access_token/",
      "https://business-api.tiktok.com/open_api/v1.3/oauth2/revoke_token/",
    ]);
    expect(urls({ ...app, TIKTOK_ADS_API_VERSION: "v1.4" })).toEqual([
      "https://business-api.tiktok.com/open_api/v1.4/oauth2/access_token/",
      "https://business-api.tiktok.com/open_api/v1.4/oauth2/revoke_token/",
    ]);
    // Explicit URLs still win (tests, proxies); a malformed version is refused naming the variable.
    expect(urls({ ...app, TIKTOK_ADS_API_VERSION: "v1.4", TIKTOK_ADS_REVOKE_URL: "http://127.0.0.1:1/revoke" })[1]).toBe("http://127.0.0.1:1/revoke");
    expect(() => urls({ ...app, TIKTOK_ADS_API_VERSION: "1.4" })).toThrow(/^TIKTOK_ADS_API_VERSION must look like v1\.3/);
  });
});

describe("Microsoft Advertising reporting", () => {
  test("GetAccount sends the account id as a long's digits: an id past 2^53 arrives whole", async () => {
    const ms = await startMicrosoftAdsServer();
    try {
      const big = "9007199254740993"; // 2^53 + 1: as a JSON number it would arrive as ...992
      ms.addAccount({ id: big, customerId: "251000001", name: "Big id", currency: "EUR", timeZone: "AmsterdamBerlinBernRomeStockholmVienna" });
      ms.addToken("EwB-low-items", { accounts: [big] });
      const client = microsoftAds.reporting!.client({ baseUrl: ms.url, accessToken: "EwB-low-items", env: { MICROSOFT_ADS_DEVELOPER_TOKEN: ms.developerToken } });
      expect(await client.account(`251000001:${big}`)).toEqual({ currency: "EUR", time_zone: "Europe/Berlin" });
      expect(ms.requests[0]).toMatchObject({ op: "/CustomerManagement/v13/Account/Query", body: { AccountId: big }, status: 200 });
    } finally {
      await ms.close();
    }
  });
});

describe("LinkedIn", () => {
  test("202512 was never released: the stand-in refuses it as LinkedIn does, and the pinned version is a released one", async () => {
    expect(PUBLISHED_VERSIONS).not.toContain("202512");
    expect(PUBLISHED_VERSIONS).toContain(linkedinAds.manifest.apiVersion!.default);
    const li = await startLinkedInAdsServer();
    try {
      li.addAccount({ id: "508000001", name: "Shoes US" });
      li.addToken("AQlow-items", { accounts: { "508000001": "CAMPAIGN_MANAGER" } });
      const at = (v?: string) => linkedinAds.client({ baseUrl: li.url, accessToken: "AQlow-items", env: v ? { LINKEDIN_ADS_API_VERSION: v } : {} }).listEntities("508000001", { limit: 1 });
      await expect(at("202512")).rejects.toMatchObject({ kind: "bad_request", detail: { status: 426, providerCode: "NONEXISTENT_VERSION" } });
      for (const v of ["202511", "202601", undefined]) await expect(at(v)).resolves.toBeDefined();
    } finally {
      await li.close();
    }
  });
});

describe("X 24-hour posting caps", () => {
  const res = (status: number, headers: Record<string, string>): OutboundResult =>
    ({ status, headers, body: JSON.stringify({ title: "Too Many Requests", detail: "Too Many Requests" }), truncated: false }) as unknown as OutboundResult;
  const now = Math.floor(Date.now() / 1000);
  const window15 = { "x-rate-limit-limit": "100", "x-rate-limit-remaining": "99", "x-rate-limit-reset": String(now + 900) };

  test("the quota read is the tightest window: a spent 24-hour cap, not the 15-minute window with room", () => {
    const cap = { "x-app-limit-24hour-limit": "17", "x-app-limit-24hour-remaining": "0", "x-app-limit-24hour-reset": String(now + 20 * 3600) };
    expect(readQuota({ ...window15, ...cap })).toEqual({ limit: 17, remaining: 0, resetAt: new Date((now + 20 * 3600) * 1000), cost: 1 });
    const user = { "x-user-limit-24hour-limit": "100", "x-user-limit-24hour-remaining": "3", "x-user-limit-24hour-reset": String(now + 5 * 3600) };
    expect(readQuota({ ...window15, ...user })).toMatchObject({ limit: 100, remaining: 3 });
    // Searches carry only the endpoint's window.
    expect(readQuota(window15)).toEqual({ limit: 100, remaining: 99, resetAt: new Date((now + 900) * 1000), cost: 1 });
  });

  test("a 429 waits for a spent 24-hour cap's reset, not the 15-minute one", () => {
    const spent = toProviderError(res(429, { ...window15, "x-user-limit-24hour-limit": "100", "x-user-limit-24hour-remaining": "0", "x-user-limit-24hour-reset": String(now + 10 * 3600) }), "reply");
    expect(spent).toBeInstanceOf(ProviderError);
    expect(spent.kind).toBe("rate_limited");
    expect(spent.detail.resetAt).toEqual(new Date((now + 10 * 3600) * 1000));
    expect(spent.detail.retryAfterMs).toBeGreaterThan(9.9 * 3_600_000);
    // A cap with room left: the 15-minute window is what ran out.
    const short = toProviderError(res(429, { ...window15, "x-rate-limit-remaining": "0", "x-app-limit-24hour-limit": "17", "x-app-limit-24hour-remaining": "5", "x-app-limit-24hour-reset": String(now + 20 * 3600) }), "reply");
    expect(short.detail.resetAt).toEqual(new Date((now + 900) * 1000));
  });
});
