import { startSnapAdsServer, type SnapAdsServer } from "../../peers/snap-ads-server.ts";
import type { AdsScenarioPeer } from "./suite.ts";

// The ads scenario suite against the local Snap Marketing API (each ad squad's targeting is written whole by a PATCH,
// so the connector reads it, merges the plan's interests and sends the rest of the targeting back as read).
// Snap has no dry run: plans need the caller's acknowledgement under strict_safety (the suite sends it).

let snap: SnapAdsServer;
let seq = 0;
/** Requests since each ad account was seeded: the suite runs one scenario (one account) at a time. */
const since = new Map<string, number>();
const included = (squadId: string) => ((snap.targetingOf(squadId)?.interests ?? []) as { category_id: string[]; operation?: string }[])
  .filter((e) => (e.operation ?? "INCLUDE") === "INCLUDE").flatMap((e) => e.category_id);

export const snapAdsPeer: AdsScenarioPeer = {
  faults: () => snap.faults,
  provider: "snap_ads",
  async start() {
    snap = await startSnapAdsServer();
    return {
      env: { SNAP_ADS_CLIENT_ID: snap.app.clientId, SNAP_ADS_CLIENT_SECRET: snap.app.clientSecret, SNAP_ADS_API_URL: snap.url, SNAP_ADS_TOKEN_URL: `${snap.url}/login/oauth2/access_token` },
      close: () => snap.close(),
    };
  },
  async seedAccount(phrases) {
    const n = ++seq;
    const account = snap.addAdAccount({ name: `Scenario ${n}` });
    const token = `snap-scenario-${n}`;
    snap.addToken(token, { accounts: [account.id], expiresInS: 1800 });
    for (const [i, name] of phrases.entries()) snap.addInterest({ id: `SLC_${9000 + n * 10 + i}`, name });
    const campaign = snap.addCampaign({ adAccountId: account.id, name: "Spring" });
    // The first has an interest already plus geos, ages and an excluded interest the plan must leave alone.
    // Snap ids are UUIDs; these sort in seeding order, as the suite lists entities (the mapping is kept by id).
    const uuid = (k: number) => `${String(n).padStart(8, "0")}-0000-4000-8000-${String(k).padStart(12, "0")}`;
    const s1 = snap.addAdSquad({ id: uuid(1), campaignId: campaign.id, name: "Music fans", targeting: {
      geos: [{ country_code: "us" }], demographics: [{ min_age: 18, max_age: 34, gender: "FEMALE" }],
      interests: [{ category_id: ["SLC_23"] }, { category_id: ["SLC_36"], operation: "EXCLUDE" }],
    } });
    const s2 = snap.addAdSquad({ id: uuid(2), campaignId: campaign.id, name: "Everyone UK", targeting: { geos: [{ country_code: "gb" }] } });
    since.set(account.id, snap.requests.length);
    return {
      token, adAccountId: account.id, entities: [{ id: s1.id, field: "interests" }, { id: s2.id, field: "interests" }],
      scopes: ["snapchat-marketing-api"], tokenExpiresAt: new Date(Date.now() + 1800_000),
    };
  },
  itemsOf: (squadId) => included(squadId).map((id) => snap.interestName(id) ?? id),
  tamper(squadId) {
    const t = snap.targetingOf(squadId)!;
    snap.setTargeting(squadId, { ...t, interests: [...(t.interests ?? []), { category_id: ["SLC_11"] }] });
  },
  refuseWritesTo(squadId) { snap.refuseAdSquad(squadId); },
  // A bare 429: Snap says nothing about how long, so the outbox's retry schedule is the wait (the suite's 0.2 s, less
  // at most 20% jitter): the retry must not come sooner, i.e. the client does not hammer Snap on its own.
  throttleNext() { snap.failNext("throttle", 1); return { minWaitMs: 150 }; },
  // Each ad squad of a PATCH answers its own sub_request_status.
  executorStepOk: (status, body) => status === 200 && ((body as { adsquads?: { sub_request_status?: string }[] } | null)?.adsquads ?? []).every((s) => s.sub_request_status === "SUCCESS"),
  calls: (adAccountId) => snap.requests.slice(since.get(adAccountId) ?? 0).filter((r) => r.path.startsWith("/v1/")).map((r) => ({
    at: r.at, throttled: !!r.throttled, write: r.method === "PATCH" || r.method === "PUT", dryRun: false,
    ok: r.status === 200, // the connector PATCHes one ad squad at a time: a refused one is a 400 ERROR
  })),
};
