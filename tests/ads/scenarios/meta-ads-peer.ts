import { startMetaAdsServer, type MetaAdsServer } from "../../peers/meta-ads-server.ts";
import type { AdsScenarioPeer } from "./suite.ts";

// The ads scenario suite against the local Meta Marketing API (whole-spec writes: each ad set POST replaces its
// targeting, so the connector reads, merges the plan's change and writes the spec back).

let meta: MetaAdsServer;
let seq = 0;
/** Requests since each ad account was seeded: the suite runs one scenario (one account) at a time. */
const since = new Map<string, number>();
const interestNames = (adsetId: string) => ((meta.targetingOf(adsetId)?.flexible_spec?.[0]?.interests ?? []) as { name: string }[]).map((i) => i.name);

export const metaAdsPeer: AdsScenarioPeer = {
  faults: () => meta.faults,
  provider: "meta_ads",
  async start() {
    meta = await startMetaAdsServer();
    return {
      env: { META_ADS_CLIENT_ID: meta.app.clientId, META_ADS_CLIENT_SECRET: meta.app.clientSecret, META_ADS_API_URL: meta.url },
      close: () => meta.close(),
    };
  },
  async seedAccount(phrases) {
    const n = ++seq;
    const account = `90000000${String(n).padStart(2, "0")}`;
    meta.addAdAccount({ id: `act_${account}`, name: `Scenario ${n}` });
    const token = `EAA-scenario-${n}`;
    meta.addToken(token, { accounts: [account] });
    for (const [i, name] of phrases.entries()) meta.addInterest({ id: `60090${String(n).padStart(4, "0")}${String(i).padStart(4, "0")}`, name });
    const campaign = meta.addCampaign({ accountId: account, name: "Spring" });
    const s1 = meta.addAdSet(`1202000000${String(n).padStart(4, "0")}01`, { accountId: account, campaignId: campaign.id, name: "Runners",
      targeting: { geo_locations: { countries: ["US"] }, age_min: 25, flexible_spec: [{ interests: [{ id: "6003107902433", name: "Running" }] }] } });
    const s2 = meta.addAdSet(`1202000000${String(n).padStart(4, "0")}02`, { accountId: account, campaignId: campaign.id, name: "Everyone", targeting: { geo_locations: { countries: ["GB"] } } });
    since.set(`act_${account}`, meta.requests.length);
    return { token, adAccountId: `act_${account}`, entities: [{ id: s1.id, field: "interests" }, { id: s2.id, field: "interests" }], scopes: ["ads_management"] };
  },
  itemsOf: interestNames,
  tamper(adsetId) {
    const t = meta.targetingOf(adsetId)!;
    meta.setTargeting(adsetId, { ...t, flexible_spec: [{ interests: [...(t.flexible_spec?.[0]?.interests ?? []), { id: "6003626773307", name: "Coffee" }] }] });
  },
  refuseWritesTo(adsetId) { meta.refuseAdSet(adsetId); },
  throttleNext() { meta.failNext("ad_account_limit", 1, { regainMinutes: 0.02 }); return { minWaitMs: 1200 }; },
  calls: (adAccountId) => meta.requests.slice(since.get(adAccountId) ?? 0).map((r) => ({
    at: r.at, throttled: !!r.throttled, write: r.method === "POST" && /^\/v[\d.]+\/\d+$/.test(r.path),
    dryRun: String(r.body?.execution_options ?? "").includes("validate_only"), ok: r.status === 200,
  })),
};
