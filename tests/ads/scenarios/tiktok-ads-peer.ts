import { startTikTokAdsServer, type TikTokAdsServer } from "../../peers/tiktok-ads-server.ts";
import type { AdsScenarioPeer } from "./suite.ts";

// The ads scenario suite against the local TikTok API for Business (whole-list writes: each /adgroup/update/ replaces
// the interest lists it sends, so the connector reads, merges the plan's change and writes the lists back). TikTok
// has no dry run: plans need acknowledging under strict_safety (the suite sends it), and a 40100 says nothing of how
// long to wait, so the retry schedule decides (minWaitMs 0).

let tt: TikTokAdsServer;
let seq = 0;
/** Requests since each advertiser was seeded: the suite runs one scenario (one advertiser) at a time. */
const since = new Map<string, number>();
const names = (adgroupId: string) => {
  const g = tt.adGroup(adgroupId)!;
  return [...g.interest_category_ids.map((id) => tt.categoryName(id) ?? id), ...g.interest_keyword_ids.map((id) => tt.keywordName(id) ?? id)];
};

export const tikTokAdsPeer: AdsScenarioPeer = {
  faults: () => tt.faults,
  provider: "tiktok_ads",
  async start() {
    tt = await startTikTokAdsServer();
    return { env: { TIKTOK_ADS_CLIENT_ID: tt.app.appId, TIKTOK_ADS_CLIENT_SECRET: tt.app.secret, TIKTOK_ADS_API_URL: tt.url }, close: () => tt.close() };
  },
  async seedAccount(phrases) {
    const n = ++seq;
    const advertiser = `72000000${String(n).padStart(2, "0")}`;
    const token = `tt-scenario-${n}`;
    tt.addToken(token, { advertisers: [advertiser] });
    for (const [i, keyword] of phrases.entries()) tt.addInterestKeyword({ keyword_id: `73${String(n).padStart(3, "0")}${String(i).padStart(3, "0")}`, keyword });
    const campaign = tt.addCampaign({ advertiserId: advertiser, name: "Launch" });
    const g1 = tt.addAdGroup({ advertiserId: advertiser, campaignId: campaign.campaign_id, name: "Early adopters", id: `17500000${String(n).padStart(4, "0")}01`, interestKeywordIds: ["710001"] });
    const g2 = tt.addAdGroup({ advertiserId: advertiser, campaignId: campaign.campaign_id, name: "Broad", id: `17500000${String(n).padStart(4, "0")}02`, interestCategoryIds: ["20"] });
    since.set(advertiser, tt.requests.length);
    return { token, adAccountId: advertiser, entities: [{ id: g1.adgroup_id, field: "interests" }, { id: g2.adgroup_id, field: "interests" }], tokenExpiresAt: new Date(Date.now() + 365 * 86_400_000) };
  },
  itemsOf: names,
  tamper(adgroupId) {
    const g = tt.adGroup(adgroupId)!;
    tt.setTargeting(adgroupId, { interest_keyword_ids: [...g.interest_keyword_ids, "710002"] });
  },
  refuseWritesTo(adgroupId) { tt.refuseAdGroup(adgroupId); },
  throttleNext() { tt.failNext("rate_limit", 1); return { minWaitMs: 0 }; },
  executorHeaders: (token) => ({ "Access-Token": token }),
  // TikTok answers HTTP 200 to failures too: `code` 0 is success.
  executorStepOk: (status, body) => status === 200 && (body as { code?: number } | null)?.code === 0,
  calls: (advertiser) => tt.requests.slice(since.get(advertiser) ?? 0).filter((r) => r.advertiserId === advertiser).map((r) => ({
    at: r.at, throttled: !!r.throttled, write: r.path.endsWith("/adgroup/update/"), dryRun: false, ok: r.code === 0,
  })),
};
