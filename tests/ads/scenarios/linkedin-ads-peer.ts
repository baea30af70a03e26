import { LINKEDIN_FACETS as F, startLinkedInAdsServer, type LinkedInAdsServer } from "../../peers/linkedin-ads-server.ts";
import type { AdsScenarioPeer } from "./suite.ts";

// The ads scenario suite against the local LinkedIn Marketing API: whole-criteria writes (a PARTIAL_UPDATE `$set`
// replaces a campaign's targetingCriteria, so the connector reads, merges the plan's change and writes it back), no
// provider dry run (the preview is the connector's checks plus audienceCounts, and strict_safety asks for the plan
// to be acknowledged), and 429s with no wait hint (the retry schedule decides the wait).

let li: LinkedInAdsServer;
let seq = 0;
/** Requests since each ad account was seeded: the suite runs one scenario (one account) at a time. */
const since = new Map<string, number>();
const US = "urn:li:geo:103644278";
const GB = "urn:li:geo:101165590";
const CYBERSECURITY = "urn:li:interest:1003";

export const linkedInAdsPeer: AdsScenarioPeer = {
  faults: () => li.faults,
  provider: "linkedin_ads",
  async start() {
    li = await startLinkedInAdsServer();
    return {
      env: { LINKEDIN_ADS_CLIENT_ID: li.app.clientId, LINKEDIN_ADS_CLIENT_SECRET: li.app.clientSecret, LINKEDIN_ADS_API_URL: li.url },
      close: () => li.close(),
    };
  },
  async seedAccount(phrases) {
    const n = ++seq;
    const account = `5090000${String(n).padStart(2, "0")}`;
    li.addAccount({ id: account, name: `Scenario ${n}` });
    const token = `AQ-scenario-${n}`;
    li.addToken(token, { accounts: { [account]: "CAMPAIGN_MANAGER" } });
    for (const [i, name] of phrases.entries()) li.addEntity({ urn: `urn:li:interest:9${String(n).padStart(3, "0")}${i}`, name, members: 20_000_000 });
    const group = li.addGroup({ account, name: "Spring" });
    const c1 = li.addCampaign({ account, group: group.id, name: "Engineers US",
      targetingCriteria: { include: { and: [{ or: { [F.locations]: [US] } }, { or: { [F.interests]: ["urn:li:interest:1001"] } }] } } });
    const c2 = li.addCampaign({ account, group: group.id, name: "Everyone UK", targetingCriteria: { include: { and: [{ or: { [F.locations]: [GB] } }] } } });
    since.set(account, li.requests.length);
    return { token, adAccountId: account, entities: [{ id: c1.id, field: "interests" }, { id: c2.id, field: "interests" }], scopes: ["r_ads", "rw_ads"] };
  },
  itemsOf: (campaignId) => li.planNames(li.criteriaOf(campaignId)),
  tamper(campaignId) {
    const c = li.criteriaOf(campaignId)!;
    li.setCriteria(campaignId, { ...c, include: { and: [...(c.include?.and ?? []), { or: { [F.interests]: [CYBERSECURITY] } }] } });
  },
  refuseWritesTo(campaignId) { li.lockCampaign(campaignId); },
  // No wait hint: the suite's retry schedule (0.2 s, jitter ±20%) is the wait.
  throttleNext() { li.failNext("throttle", 1); return { minWaitMs: 160 }; },
  calls: (adAccountId) => li.requests.slice(since.get(adAccountId) ?? 0).filter((r) => r.path.startsWith("/rest/")).map((r) => ({
    at: r.at, throttled: !!r.throttled, write: r.method === "POST" && /^\/rest\/adAccounts\/\d+\/adCampaigns\/\d+$/.test(r.path), dryRun: false, ok: r.status === 204,
  })),
};
