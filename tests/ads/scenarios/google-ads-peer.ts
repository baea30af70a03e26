import { startGoogleAdsServer, type GoogleAdsServer } from "../../peers/google-ads-server.ts";
import type { AdsScenarioPeer } from "./suite.ts";

// The ads scenario suite against the local Google Ads API (per-item writes: adGroupCriteria:mutate with partialFailure).

let google: GoogleAdsServer;
const positive = (adGroupId: string) => google.keywordsOf(adGroupId).filter((k) => !k.negative).map((k) => k.text);

export const googleAdsPeer: AdsScenarioPeer = {
  faults: () => google.faults,
  provider: "google_ads",
  async start() {
    google = await startGoogleAdsServer();
    return { env: { GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url }, close: () => google.close() };
  },
  async seedAccount() {
    const customer = google.addCustomer();
    const token = `tok-${customer.id}`;
    google.addToken(token, { customers: [customer.id] });
    const campaign = google.addCampaign({ customerId: customer.id, name: "Search" });
    const g1 = google.addAdGroup({ campaignId: campaign.id, name: "AI" });
    const g2 = google.addAdGroup({ campaignId: campaign.id, name: "Gadgets" });
    // Listed by Google too, never planned: a removed ad group, a removed campaign, a Performance Max campaign.
    google.addAdGroup({ campaignId: campaign.id, name: "Retired", status: "REMOVED" });
    google.addAdGroup({ campaignId: google.addCampaign({ customerId: customer.id, name: "Old search", status: "REMOVED" }).id, name: "Old" });
    google.addCampaign({ customerId: customer.id, name: "PMax", advertisingChannelType: "PERFORMANCE_MAX" });
    google.addKeyword({ adGroupId: g1.id, text: "machine learning", matchType: "PHRASE" });
    return { token, adAccountId: customer.id, entities: [{ id: g1.id, field: "keywords" }, { id: g2.id, field: "keywords" }], scopes: ["https://www.googleapis.com/auth/adwords"] };
  },
  itemsOf: positive,
  tamper(adGroupId) { google.addKeyword({ adGroupId, text: "someone else's keyword", matchType: "EXACT" }); },
  refuseWritesTo(adGroupId) { google.refuseAdGroup(adGroupId); },
  throttleNext() { google.failNext("RESOURCE_TEMPORARILY_EXHAUSTED"); return { minWaitMs: 5000 }; }, // its retryDelay "5s"
  // partialFailure: a 200 may still carry refused operations.
  executorStepOk: (status, body) => status === 200 && !(body as { partialFailureError?: unknown } | null)?.partialFailureError,
  calls: (customerId) => google.requests.filter((r) => r.path.includes(`/customers/${customerId}`)).map((r) => ({
    at: r.at.getTime(), throttled: r.status === 429, write: r.path.endsWith(":mutate"), dryRun: !!r.body?.validateOnly, ok: r.status === 200,
  })),
};
