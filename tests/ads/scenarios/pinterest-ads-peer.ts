import { startPinterestAdsServer, type PinterestAdsServer } from "../../peers/pinterest-ads-server.ts";
import type { AdsScenarioPeer } from "./suite.ts";

// The ads scenario suite against the local Pinterest API v5 (no dry run: the preview is the connector's own checks,
// and strict_safety asks for the plan's hash). Both ad groups are mapped by their interests: each write is a
// read-merge-write of the whole targeting_spec through the batch ad-group PATCH, with per-item exceptions. (Keywords,
// Pinterest's other targeting, are covered in tests/connectors/pinterest-ads.test.ts: the preview route merges every
// field's resolved items into one map keyed by trend name, so one plan cannot yet mix interests and keywords.) Every
// request and answer of the run is checked against Pinterest's published description.

let pin: PinterestAdsServer;
let seq = 0;
/** Requests since each ad account was seeded: the suite runs one scenario (one account) at a time. */
const since = new Map<string, number>();
const interestNames = new Map<string, string>();

export const pinterestAdsPeer: AdsScenarioPeer = {
  faults: () => pin.faults,
  provider: "pinterest_ads",
  async start() {
    pin = await startPinterestAdsServer();
    return {
      env: { PINTEREST_ADS_CLIENT_ID: pin.app.clientId, PINTEREST_ADS_CLIENT_SECRET: pin.app.clientSecret, PINTEREST_ADS_API_URL: pin.url },
      close: () => pin.close(),
    };
  },
  async seedAccount(phrases) {
    const n = ++seq;
    const account = `5497558800${String(n).padStart(2, "0")}`;
    pin.addAdAccount({ id: account, name: `Scenario ${n}` });
    const token = `pina_scenario-${n}`;
    pin.addToken(token, { accounts: [account] });
    // Pinterest interests named as the trends, so the catalogue lookup resolves them.
    for (const [i, name] of phrases.entries()) {
      const id = `97${String(n).padStart(4, "0")}${String(i).padStart(6, "0")}`;
      pin.addInterest({ id, name });
      interestNames.set(id, name);
    }
    interestNames.set("935249274030", "Home decor");
    interestNames.set("906810023155", "Gardening");
    const campaign = pin.addCampaign({ adAccountId: account, name: "Spring" });
    const g1 = pin.addAdGroup({ adAccountId: account, campaignId: campaign.id, name: "Decor lovers", id: `26800${String(n).padStart(4, "0")}01`,
      targetingSpec: { LOCATION: ["US"], MINIMUM_AGE: "25", MAXIMUM_AGE: "54", INTEREST: ["935249274030"] } });
    const g2 = pin.addAdGroup({ adAccountId: account, campaignId: campaign.id, name: "Everyone UK", id: `26800${String(n).padStart(4, "0")}02`, targetingSpec: { GEO: ["GB-LND"], APPTYPE: ["web"] } });
    since.set(account, pin.requests.length);
    return { token, adAccountId: account, entities: [{ id: g1.id, field: "interests" }, { id: g2.id, field: "interests" }], scopes: ["ads:read", "ads:write"] };
  },
  itemsOf: (adGroupId) => ((pin.targetingOf(adGroupId)?.INTEREST ?? []) as string[]).map((id) => interestNames.get(id) ?? id),
  tamper(adGroupId) {
    const ts = pin.targetingOf(adGroupId)!;
    pin.setTargeting(adGroupId, { ...ts, INTEREST: [...(ts.INTEREST ?? []), "906810023155"] });
  },
  refuseWritesTo(adGroupId) { pin.refuseAdGroup(adGroupId); },
  throttleNext() { pin.failNext("rate_limit", 1, { resetS: 1 }); return { minWaitMs: 1000 }; },
  // Pinterest answers 200 whatever became of each item: ad groups carry `exceptions`, keywords `errors`.
  executorStepOk: (status, body) => {
    const b = (body ?? {}) as { items?: { exceptions?: unknown[] }[]; errors?: unknown[] };
    return status === 200 && !(b.items ?? []).some((i) => i.exceptions?.length) && !(b.errors ?? []).length;
  },
  calls: (account) => pin.requests.slice(since.get(account) ?? 0)
    .filter((r) => r.path.startsWith(`/v5/ad_accounts/${account}/`) || r.query.ad_account_id?.[0] === account)
    .map((r) => ({ at: r.at, throttled: !!r.throttled, write: r.method !== "GET" && !r.path.endsWith("/audience_sizing"), dryRun: false, ok: r.status === 200 })),
};

/** Requests and answers that broke Pinterest's published API description. */
export const pinterestSpecViolations = () => pin.specViolations;
