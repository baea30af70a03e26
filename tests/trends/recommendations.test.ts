// Recommendations: what an account is told to do about its trends depends on what it has connected, on the trend's
// sentiment, and on the evidence (confidence). The pure rules (recommend), then the API on a real database.
import { confidenceOf, recommend, type AccountSetup, type TrendInput } from "@trendgate/trends";
import { newId } from "@trendgate/db";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

const trend = (over: Partial<TrendInput> = {}): TrendInput => ({
  id: over.id ?? "trd_1", name: "Edge AI", category: "tech/ai", severity: "high", stage: "rising", velocity: 400, anomalyScore: 12, sentiment: 0.2, current: 300,
  sources: ["reddit", "x"], hoursActive: 2, ...over,
});
const nothing: AccountSetup = { workflow: "missing", chat: "missing", ads: [], webhooks: 0 };
const everything: AccountSetup = { workflow: "ready", chat: "ready", ads: [{ provider: "google_ads", readiness: "ready", category: "tech" }], webhooks: 1 };

describe("recommend()", () => {
  test("with nothing connected, no action that would fail: one set-up hint per connector the trends need", () => {
    const recs = recommend([trend({ id: "trd_a", severity: "critical" }), trend({ id: "trd_b", severity: "high", anomalyScore: 8 })], nothing);
    expect(recs.filter((r) => ["push_to_workflow", "target_ads_category", "alert_team"].includes(r.action))).toEqual([]);
    const setups = recs.filter((r) => r.action === "set_up_connector");
    expect(setups.map((r) => r.connector).sort()).toEqual(["ads", "chat", "workflow"]);
    // each hint is tied to the most confident trend that needs it
    for (const r of setups) expect(r.trend_id).toBe("trd_a");
    expect(setups.find((r) => r.connector === "ads")!.reason).toMatch(/no ads connection targeting it/);
  });

  test("with the connectors ready, the actions are recommended and name what carries them", () => {
    const recs = recommend([trend({ severity: "critical" })], everything);
    expect(recs.map((r) => [r.action, r.connector]).sort()).toEqual([["alert_team", "chat"], ["push_to_workflow", "workflow"], ["target_ads_category", "ads"]]);
    expect(recs.find((r) => r.action === "target_ads_category")!.reason).toContain("google_ads");
  });

  test("ads only where a connection's trend category covers the trend; a broken connection is a repair hint", () => {
    const other: AccountSetup = { ...everything, ads: [{ provider: "meta_ads", readiness: "ready", category: "food" }] };
    expect(recommend([trend()], other).some((r) => r.action === "target_ads_category")).toBe(false);
    const broken: AccountSetup = { ...everything, ads: [{ provider: "meta_ads", readiness: "broken", category: "tech/ai" }] };
    const hint = recommend([trend()], broken).find((r) => r.action === "set_up_connector" && r.connector === "ads");
    expect(hint?.reason).toMatch(/needs attention/);
  });

  test("a negative trend is never advertised into: the team is told instead", () => {
    const recs = recommend([trend({ severity: "high", sentiment: -0.95 })], everything);
    expect(recs.some((r) => r.action === "target_ads_category" || r.action === "push_to_workflow")).toBe(false);
    expect(recs).toEqual([expect.objectContaining({ action: "alert_team", connector: "chat", reason: expect.stringMatching(/negative conversation \(sentiment -0\.95\)/) })]);
    // without chat, the account's webhooks carry the alert
    expect(recommend([trend({ severity: "high", sentiment: -0.95 })], { ...everything, chat: "missing" })[0]).toMatchObject({ action: "alert_team", connector: "webhooks" });
  });

  test("confidence follows the evidence, the stage and the volume instead of one value for all", () => {
    const c = [4.5, 7, 10, 20, 40].map((anomalyScore) => confidenceOf(trend({ anomalyScore })));
    expect(c).toEqual([...c].sort((a, b) => a - b));
    expect(new Set(c).size).toBe(5);
    expect(c[0]).toBeLessThan(0.5);
    expect(confidenceOf(trend({ stage: "cooling" }))).toBeLessThan(confidenceOf(trend({ stage: "rising" })));
    expect(confidenceOf(trend({ current: 10 }))).toBeLessThan(confidenceOf(trend({ current: 300 })));
  });

  test("confidence grows with agreement across sources and with time active, and the reason says so", () => {
    const by = (sources: string[], hoursActive: number) => confidenceOf(trend({ sources, hoursActive }));
    expect(by(["x"], 2)).toBeLessThan(by(["reddit", "x"], 2));
    expect(by(["reddit", "x"], 2)).toBeLessThan(by(["reddit", "x", "youtube"], 2));
    expect(by(["x"], 0.1)).toBeLessThan(by(["x"], 5));
    expect(by(["x"], 5)).toBe(by(["x"], 50)); // duration stops counting after a few hours
    const [one] = recommend([trend({ sources: ["x"], hoursActive: 0.2, anomalyScore: 9.04 })], everything);
    expect(one.reason).toMatch(/\[score 9\.0, detected under an hour ago, seen on x only\]$/);
    const [three] = recommend([trend({ sources: ["reddit", "x", "youtube"], hoursActive: 4.5 })], everything);
    expect(three.reason).toMatch(/\[score 12\.0, active 4 h, seen on 3 sources \(reddit, x, youtube\)\]$/);
  });
});

describe("recommend() and what the account already did", () => {
  test("a muted trend gets no action, only watch naming the mute; other trends are unaffected", () => {
    const recs = recommend([trend({ id: "trd_m", severity: "critical", handled: { muteId: "mut_1" } }), trend({ id: "trd_n", severity: "critical" })], everything);
    expect(recs.filter((r) => r.trend_id === "trd_m")).toEqual([expect.objectContaining({ action: "watch", connector: null, reason: expect.stringMatching(/^muted \(mut_1\)/) })]);
    expect(recs.filter((r) => r.trend_id === "trd_n").map((r) => r.action).sort()).toEqual(["alert_team", "push_to_workflow", "target_ads_category"]);
    // nor does a muted trend ask for a connector to be set up
    expect(recommend([trend({ severity: "critical", handled: { muteId: "mut_1" } })], nothing).map((r) => r.action)).toEqual(["watch"]);
  });

  test("an operator item the team acknowledged, snoozed or resolved is not alerted again", () => {
    for (const team of ["acknowledged", "snoozed", "resolved"] as const) {
      const recs = recommend([trend({ severity: "high", sentiment: -0.8, handled: { team } })], everything);
      expect(recs).toEqual([expect.objectContaining({ action: "watch", reason: expect.stringContaining(`the team ${team} its operator item`) })]);
    }
  });

  test("a provider whose plan for the trend's category was applied is not recommended again; another ready one still is", () => {
    const two: AccountSetup = { ...everything, workflow: "missing", ads: [{ provider: "google_ads", readiness: "ready", category: "tech" }, { provider: "meta_ads", readiness: "ready", category: "tech/ai" }] };
    const stable = { severity: "high", stage: "peaking" } as const;
    const one = recommend([trend({ ...stable, handled: { adsApplied: ["google_ads"] } })], two);
    expect(one.filter((r) => r.action === "target_ads_category").map((r) => r.reason)).toEqual([expect.stringContaining("meta_ads")]);
    const both = recommend([trend({ ...stable, handled: { adsApplied: ["google_ads", "meta_ads"] } })], two);
    expect(both).toEqual([expect.objectContaining({ action: "watch", reason: expect.stringContaining("applied on google_ads, meta_ads") })]);
  });
});

describe("GET /api/intelligence/recommendations", () => {
  let gw: TestGateway;
  beforeAll(async () => { gw = await startGateway(); });
  afterAll(async () => { await gw.close(); });

  async function seedTrend(accountId: string, over: { severity: string; stage: string; sentiment: number | null; score: number; category?: string }) {
    const topicId = newId("top");
    await gw.deps.db.topic.create({ data: { id: topicId, accountId, key: `topic ${topicId}|${over.category ?? "tech/ai"}`, name: `topic ${topicId}`, category: over.category ?? "tech/ai" } });
    const now = new Date();
    await gw.deps.db.trend.create({
      data: {
        id: newId("trd"), accountId, topicId, name: `topic ${topicId}`, category: over.category ?? "tech/ai", status: "active", severity: over.severity, stage: over.stage,
        velocity: 300, acceleration: 0, baseline: 100, current: 400, anomalyScore: over.score, peakVelocity: 300, publishedVelocity: 300, sentiment: over.sentiment,
        detectedAt: now, bucketStart: now,
      },
    });
  }

  test("follows the account's connections: set-up hints without them, actions with them; negative trends get no ads", async () => {
    const a = await gw.account();
    await seedTrend(a.accountId, { severity: "critical", stage: "rising", sentiment: 0.4, score: 25 });
    await seedTrend(a.accountId, { severity: "high", stage: "peaking", sentiment: -0.95, score: 14 });
    const get = async () => (await gw.http.get("/api/intelligence/recommendations").set(a.auth)).body.data as any[];

    let recs = await get();
    expect(recs.filter((r) => r.action !== "set_up_connector" && r.action !== "watch" && r.connector !== "webhooks")).toEqual([]);
    expect(recs.filter((r) => r.action === "set_up_connector").map((r) => r.connector).sort()).toEqual(["ads", "chat", "workflow"]);

    const conn = (kind: string, provider: string, selection: object) => gw.deps.db.connection.create({
      data: { id: newId("con"), accountId: a.accountId, kind, provider, status: "connected", credentialsSealed: "sealed", selection },
    });
    await conn("workflow", "n8n", { workflow_id: "wf1", workflow_name: "Launch", default_event: "trend_lifecycle" });
    await conn("chat", "slack", { channel_id: "C1", channel_name: "alerts" });
    await conn("ads", "google_ads", { trend_category: "tech", strict_safety: true });
    recs = await get();
    expect(recs.some((r) => r.action === "set_up_connector")).toBe(false);
    expect(recs.filter((r) => r.action === "target_ads_category")).toHaveLength(1); // the positive trend only
    expect(recs.filter((r) => r.action === "alert_team").map((r) => r.reason).join(" ")).toMatch(/negative conversation/);
    expect(new Set(recs.map((r) => r.confidence)).size).toBeGreaterThan(1);
  });

  test("confidence counts the sources that saw the topic in the last day, from the stored signals", async () => {
    const a = await gw.account();
    await seedTrend(a.accountId, { severity: "high", stage: "rising", sentiment: 0.2, score: 12 });
    const [t] = await gw.deps.db.trend.findMany({ where: { accountId: a.accountId } });
    const signal = (source: string, hoursAgo: number) => ({
      id: newId("sig"), accountId: a.accountId, source, externalId: `${source}-${hoursAgo}`, topic: t.name, category: t.category, count: 1,
      observedAt: new Date(Date.now() - hoursAgo * 3600_000),
    });
    await gw.deps.db.signal.createMany({ data: [signal("x", 1), signal("youtube", 30)] }); // youtube: too long ago
    const get = async () => (await gw.http.get("/api/intelligence/recommendations").set(a.auth)).body.data as any[];
    const before = await get();
    expect(before[0].reason).toMatch(/seen on x only\]$/);
    await gw.deps.db.signal.createMany({ data: [signal("reddit", 2)] });
    const after = await get();
    expect(after[0].reason).toMatch(/seen on 2 sources \(reddit, x\)\]$/);
    expect(after[0].confidence).toBeGreaterThan(before[0].confidence);
  });

  test("honours the account's mutes, its team's answers on operator items and the ads plans it applied", async () => {
    const a = await gw.account();
    await seedTrend(a.accountId, { severity: "critical", stage: "peaking", sentiment: 0.4, score: 25 });
    await seedTrend(a.accountId, { severity: "critical", stage: "peaking", sentiment: 0.4, score: 20 });
    await seedTrend(a.accountId, { severity: "critical", stage: "peaking", sentiment: 0.4, score: 15 });
    const [muted, acked, applied] = await gw.deps.db.trend.findMany({ where: { accountId: a.accountId }, orderBy: { anomalyScore: "desc" } });
    const conn = (kind: string, provider: string, selection: object) => gw.deps.db.connection.create({
      data: { id: newId("con"), accountId: a.accountId, kind, provider, status: "connected", credentialsSealed: "sealed", selection },
    });
    await conn("chat", "slack", { channel_id: "C1", channel_name: "alerts" });
    const ads = await conn("ads", "google_ads", { trend_category: "tech", strict_safety: true });
    const get = async () => (await gw.http.get("/api/intelligence/recommendations").set(a.auth)).body.data as any[];
    const actionsOf = (recs: any[], t: { id: string }) => recs.filter((r) => r.trend_id === t.id).map((r) => r.action).sort();
    const before = await get();
    for (const t of [muted, acked, applied]) expect(actionsOf(before, t)).toEqual(["alert_team", "target_ads_category"]);

    const mute = await gw.http.post("/api/mutes").set(a.auth).send({ topic: muted.name, duration_minutes: 60 });
    expect(mute.status).toBe(201);
    await gw.deps.db.operatorItem.create({
      data: { id: newId("opi"), accountId: a.accountId, dedupKey: `trend:${acked.id}`, trendId: acked.id, state: "acknowledged", severity: "critical",
        title: acked.name, category: acked.category, summary: "s", velocity: 300 },
    });
    await gw.deps.db.adsPlan.create({
      data: { id: newId("pln"), accountId: a.accountId, provider: "google_ads", connectionId: ads.id, adAccountId: "1", category: "tech/ai", strictSafety: true,
        status: "applied", changes: [], calls: [], diff: [], refused: [], priorState: {}, priorStateHash: "h", expiresAt: new Date(Date.now() + 3600_000), appliedAt: new Date() },
    });
    const after = await get();
    expect(after.filter((r) => r.trend_id === muted.id)).toEqual([expect.objectContaining({ action: "watch", reason: expect.stringContaining(`muted (${mute.body.id})`) })]);
    // acknowledged: no second alert; the plan applied for tech/ai covers both remaining trends
    expect(actionsOf(after, acked)).toEqual(["watch"]);
    expect(after.find((r) => r.trend_id === acked.id).reason).toMatch(/^a targeting plan for it was applied on google_ads; the team acknowledged its operator item: nothing more to do/);
    expect(actionsOf(after, applied)).toEqual(["alert_team"]);

    // Ending the mute brings its actions back.
    expect((await gw.http.delete(`/api/mutes/${mute.body.id}`).set(a.auth)).status).toBe(204);
    expect(actionsOf(await get(), muted)).toEqual(["alert_team"]);
  });
});
