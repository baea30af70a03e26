import { saveAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { addTrend } from "./kit.ts";
import { linkedInAdsPeer } from "./scenarios/linkedin-ads-peer.ts";
import { pinterestAdsPeer } from "./scenarios/pinterest-ads-peer.ts";
import { snapAdsPeer } from "./scenarios/snap-ads-peer.ts";
import type { AdsScenarioPeer } from "./scenarios/suite.ts";
import { tikTokAdsPeer } from "./scenarios/tiktok-ads-peer.ts";

// Meta's no_interest_matched preview (preview-explained.test.ts), for every other provider that targets interests:
// when the trend's term finds nothing in the provider's interest lookup, the empty plan says so and names the term
// and where it was searched, so the user knows to reword the trend rather than fix a mapping. Each stand-in's
// catalogue is only its seeds (the accounts are seeded with no phrases), none of which a "Quantum knitting"
// search matches: not exactly, not by containment (TikTok, LinkedIn, Snap) and not word-wise (Pinterest).

const TERM = "Quantum knitting";
const cases: { label: string; peer: AdsScenarioPeer; where: string; entities: string[] }[] = [
  { label: "TikTok", peer: tikTokAdsPeer, where: "TikTok's interest keyword recommendations and its interest categories", entities: ["Early adopters", "Broad"] },
  { label: "LinkedIn", peer: linkedInAdsPeer, where: "LinkedIn's targeting typeahead (member interests, then skills)", entities: ["Engineers US", "Everyone UK"] },
  { label: "Snap", peer: snapAdsPeer, where: "Snap's lifestyle categories", entities: ["Music fans", "Everyone UK"] },
  { label: "Pinterest", peer: pinterestAdsPeer, where: "the ad account's Pinterest interest catalogue", entities: ["Decor lovers", "Everyone UK"] },
];

let servers: { env: Record<string, string>; close(): Promise<void> }[] = [];
let gw: TestGateway;

beforeAll(async () => {
  servers = await Promise.all(cases.map((c) => c.peer.start()));
  const env: Record<string, string> = Object.assign({}, ...servers.map((s) => s.env));
  gw = await startGateway({ ...env, OUTBOUND_ALLOWLIST: "127.0.0.1" });
});
afterAll(async () => { await gw?.close(); await Promise.all(servers.map((s) => s.close())); });

describe("a trend whose term matches no interest previews no_interest_matched, naming the term and the provider's interest lookup", () => {
  test.each(cases)("$label: the empty plan names the term and where it was searched, on the plan and on each mapped entity", async ({ peer, where, entities }) => {
    const base = `/api/integrations/ads/${peer.provider}`;
    const seeded = await peer.seedAccount([]); // nothing of the trend's name added to the catalogue
    expect(seeded.entities.every((e) => e.field === "interests")).toBe(true);
    const a = await gw.account();
    await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
      accountId: a.accountId, provider: peer.provider, kind: "ads", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: seeded.token, tokenType: "bearer" }),
      tokenExpiresAt: seeded.tokenExpiresAt ?? new Date(Date.now() + 3600_000), scopes: seeded.scopes ?? [], externalAccount: {},
    }));
    await addTrend(gw, a.accountId, TERM);
    expect((await gw.http.put(`${base}/selection`).set(a.auth).send({ trend_category: "tech", account_id: seeded.adAccountId })).status).toBe(200);
    expect((await gw.http.put(`${base}/mappings`).set(a.auth).send({ entities: seeded.entities })).status).toBe(200);

    const res = await gw.http.post(`${base}/preview`).set(a.auth);
    expect([res.status, res.body.detail]).toEqual([201, undefined]);
    const plan = res.body;
    expect([plan.changes, plan.refused, plan.empty_reason]).toEqual([[], [], "no_interest_matched"]);
    expect(plan.empty_detail).toBe(`no interest matched the trend terms searched in ${where}: "${TERM}"`);
    // Per entity too, each named as the provider lists it.
    expect(plan.diff.map((d: { entity_name: string; empty_reason: string }) => [d.entity_name, d.empty_reason]))
      .toEqual(entities.map((name) => [name, "no_interest_matched"]));
    expect((await gw.http.get(`${base}/plans/${plan.id}`).set(a.auth)).body).toEqual(plan);
  });
});
