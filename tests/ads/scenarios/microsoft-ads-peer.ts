import { startMicrosoftAdsServer, type MicrosoftAdsServer } from "../../peers/microsoft-ads-server.ts";
import type { AdsScenarioPeer } from "./suite.ts";

// The ads scenario suite against the local Microsoft Advertising REST API (per-item writes: AddKeywords /
// DeleteKeywords per ad group, PartialErrors per keyword; no provider dry run, so the connector's own checks run at
// preview and strict_safety asks for the plan's acknowledgement). CallRateExceeded carries no wait: the connector
// waits MICROSOFT_ADS_THROTTLE_WAIT_SECONDS (Microsoft says 60 s; 1 s here).

let ms: MicrosoftAdsServer;
let seq = 0;
const CUSTOMER = "251000001";

export const microsoftAdsPeer: AdsScenarioPeer = {
  faults: () => ms.faults,
  provider: "microsoft_ads",
  async start() {
    ms = await startMicrosoftAdsServer();
    return {
      env: {
        MICROSOFT_ADS_CLIENT_ID: ms.app.clientId, MICROSOFT_ADS_CLIENT_SECRET: ms.app.clientSecret, MICROSOFT_ADS_API_URL: ms.url,
        MICROSOFT_ADS_DEVELOPER_TOKEN: ms.developerToken, MICROSOFT_ADS_THROTTLE_WAIT_SECONDS: "1",
      },
      close: () => ms.close(),
    };
  },
  async seedAccount() {
    const n = ++seq;
    const account = ms.addAccount({ customerId: CUSTOMER, name: `Scenario ${n}` });
    const token = `EwB-scenario-${n}`;
    ms.addToken(token, { accounts: [account.id] });
    const campaign = ms.addCampaign({ accountId: account.id, name: "Search" });
    const g1 = ms.addAdGroup({ campaignId: campaign.id, name: "AI" });
    const g2 = ms.addAdGroup({ campaignId: campaign.id, name: "Gadgets" });
    ms.addKeyword({ adGroupId: g1.id, text: "machine learning", matchType: "Phrase" });
    return { token, adAccountId: `${CUSTOMER}:${account.id}`, entities: [{ id: g1.id, field: "keywords" }, { id: g2.id, field: "keywords" }], scopes: ["https://ads.microsoft.com/msads.manage", "offline_access"] };
  },
  itemsOf: (adGroupId) => ms.keywordsOf(adGroupId).map((k) => k.text),
  tamper(adGroupId) { ms.addKeyword({ adGroupId, text: "someone else's keyword", matchType: "Exact" }); },
  refuseWritesTo(adGroupId) { ms.refuseAdGroup(adGroupId); },
  throttleNext() { ms.failNext("call_rate"); return { minWaitMs: 1000 }; },
  // The developer token is the app's configuration, not in the plan: the caller adds it with its access token.
  executorHeaders: (token) => ({ authorization: `Bearer ${token}`, DeveloperToken: ms.developerToken }),
  // A 200 may carry per-keyword PartialErrors.
  executorStepOk: (status, body) => status === 200 && !((body as { PartialErrors?: unknown[] } | null)?.PartialErrors ?? []).some((e) => e),
  calls: (adAccountId) => ms.requests.filter((r) => r.headers.customeraccountid === adAccountId.split(":")[1]).map((r) => ({
    at: r.at, throttled: r.throttled, write: r.op === "Keywords", dryRun: false, ok: r.status === 200,
  })),
};
