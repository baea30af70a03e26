import { createLocalJWKSet, jwtVerify, SignJWT, importJWK, type JWK } from "jose";
import { generateExecutorSigningKey } from "@trendgate/ads";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { startMetaAdsServer, type MetaAdsServer } from "../peers/meta-ads-server.ts";
import { addTrend, googleConnected } from "./kit.ts";

// Executor plans, with the test playing the caller: it previews as usual, asks for a signed plan,
// verifies it with the published keys (jose's JWKS, as any caller would), checks each step's precondition against
// the provider, runs the validate-only variant then the request with its own token against the local Google Ads
// API, and reports per-step results once. A tampered plan, an expired plan and a replayed report are refused; a
// changed target makes the caller skip the step and the run ends refused.

const BASE = "/api/integrations/ads/google_ads";
const RESULTS = "/api/integrations/ads/executor/results";
let google: GoogleAdsServer;
let meta: MetaAdsServer;
let gw: TestGateway;
let signingJwk: JWK;

beforeAll(async () => {
  google = await startGoogleAdsServer();
  meta = await startMetaAdsServer();
  const key = await generateExecutorSigningKey();
  signingJwk = JSON.parse(key);
  gw = await startGateway({
    OUTBOUND_ALLOWLIST: "127.0.0.1",
    GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url,
    META_ADS_CLIENT_ID: meta.app.clientId, META_ADS_CLIENT_SECRET: meta.app.clientSecret, META_ADS_API_URL: meta.url,
    EXECUTOR_SIGNING_KEY: key, PUBLIC_BASE_URL: "https://trendgate.test",
  });
});
afterAll(async () => { await gw.close(); await google.close(); await meta.close(); });

async function previewed(trends: string[]) {
  const a = await googleConnected(gw, google);
  const campaign = google.addCampaign({ customerId: a.customer.id, name: "Search" });
  const g1 = google.addAdGroup({ campaignId: campaign.id, name: "AI" });
  const g2 = google.addAdGroup({ campaignId: campaign.id, name: "Gadgets" });
  google.addKeyword({ adGroupId: g1.id, text: "machine learning", matchType: "PHRASE" });
  for (const t of trends) await addTrend(gw, a.accountId, t);
  await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", account_id: a.customer.id });
  await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: g1.id, field: "keywords" }, { id: g2.id, field: "keywords" }] });
  const plan = (await gw.http.post(`${BASE}/preview`).set(a.auth)).body;
  expect(plan.changes.length).toBeGreaterThan(0);
  return { a, g1, g2, plan };
}

interface Req { method: string; url: string; headers: Record<string, string>; body?: unknown; credentials: string }
interface Step { seq: number; change_ids: string[]; request: Req; dry_run: Req | null; rollback: Req[]; precondition: { targets: { entity_id: string; items: { text: string }[] }[] } }

/** The caller's side: what its runtime does with a verified plan, using its own token. */
async function execute(steps: Step[], token: string, opts: { before?: (s: Step) => void; skipDryRun?: boolean } = {}) {
  const send = async (r: Req) => {
    expect(r.credentials).toBe("Authorization: Bearer <access token>");
    expect(JSON.stringify(r)).not.toContain(token); // the plan never carries credentials
    const res = await fetch(r.url, { method: r.method, headers: { ...r.headers, authorization: `Bearer ${token}` }, body: JSON.stringify(r.body) });
    return { status: res.status, requestId: res.headers.get("request-id") ?? undefined, body: await res.json() as any };
  };
  const report = [];
  for (const s of steps) {
    opts.before?.(s);
    const now = s.precondition.targets.map((t) => google.keywordsOf(t.entity_id).filter((k) => !k.negative).map((k) => k.text).sort());
    if (JSON.stringify(now) !== JSON.stringify(s.precondition.targets.map((t) => t.items.map((i) => i.text).sort()))) {
      report.push({ seq: s.seq, status: "skipped", precondition_held: false });
      continue;
    }
    if (s.dry_run && !opts.skipDryRun) expect((await send(s.dry_run)).status).toBe(200);
    const r = await send(s.request);
    const failed = new Map<number, string>();
    for (const e of r.body.partialFailureError?.details?.[0]?.errors ?? []) failed.set(e.location.fieldPathElements[0].index, e.message);
    report.push({
      seq: s.seq, status: r.status === 200 && !failed.size ? "succeeded" : "failed", http_status: r.status, request_id: r.requestId,
      changes: s.change_ids.map((id, i) => (failed.has(i) ? { change_id: id, ok: false, error: failed.get(i) } : { change_id: id, ok: true, resource: r.body.results?.[i]?.resourceName })),
    });
  }
  return report;
}

async function issue(a: { auth: Record<string, string> }, planId: string) {
  const res = await gw.http.post(`${BASE}/executor/plans`).set(a.auth).send({ plan_id: planId });
  expect(res.status).toBe(201);
  return res.body;
}

test("the caller verifies the signed plan with the published keys, runs it with its own token, reports once", async () => {
  const { a, g1, g2, plan } = await previewed(["AI agents", "Foldable phones"]);
  const issued = await issue(a, plan.id);
  const jwks = await gw.http.get("/.well-known/executor-keys");
  expect(jwks.status).toBe(200);
  expect(jwks.body.keys).toEqual([expect.objectContaining({ kty: "OKP", crv: "Ed25519", kid: issued.kid, alg: "EdDSA" })]);
  expect(jwks.body.keys[0]).not.toHaveProperty("d");
  const { payload, protectedHeader } = await jwtVerify(issued.executor_plan, createLocalJWKSet(jwks.body), { audience: a.accountId, issuer: "https://trendgate.test" });
  expect(protectedHeader).toMatchObject({ alg: "EdDSA", typ: "trendgate-executor-plan+jwt" });
  expect(payload.jti).toBe(plan.id);
  const doc = payload.plan as { steps: Step[]; report: { url: string } };
  expect(doc).toEqual(issued.plan);
  expect(doc.report.url).toBe(`https://trendgate.test${RESULTS}`);
  expect(doc.steps[0].request.url).toBe(`${google.url}/v25/customers/${a.customer.id}/adGroupCriteria:mutate`);
  expect(doc.steps[0].dry_run!.body).toMatchObject({ validateOnly: true });
  // Single use: not applied by us, not issued twice.
  expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id })).status).toBe(409);
  expect((await gw.http.post(`${BASE}/executor/plans`).set(a.auth).send({ plan_id: plan.id })).status).toBe(409);

  const steps = await execute(doc.steps, a.token);
  for (const d of plan.diff) expect(google.keywordsOf(d.entity_id).filter((k) => !k.negative).map((k) => k.text).sort()).toEqual([...d.after].sort());
  const body = { executor_plan: issued.executor_plan, executed_at: new Date().toISOString(), steps };
  const res = await gw.http.post(RESULTS).set(a.auth).set("Idempotency-Key", `report-${plan.id}`).send(body);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ id: plan.id, status: "applied", run_id: issued.run_id });
  expect(res.body.results.every((r: { ok: boolean; request_id: string }) => r.ok && r.request_id)).toBe(true);

  // A retried report with its Idempotency-Key gets the first answer; any other replay is refused.
  const retried = await gw.http.post(RESULTS).set(a.auth).set("Idempotency-Key", `report-${plan.id}`).send(body);
  expect([retried.status, retried.body.status]).toEqual([200, "applied"]);
  const replay = await gw.http.post(RESULTS).set(a.auth).send(body);
  expect([replay.status, replay.body.code]).toEqual([409, "conflict"]);
  expect((await gw.http.get(`${BASE}/runs`).set(a.auth)).body.data.map((r: { id: string }) => r.id)).toEqual([plan.id]);

  // Its rollback requests undo it (the caller fills in what the provider named each created keyword).
  const created = new Map(res.body.results.map((r: { change_id: string; resource: string }) => [r.change_id, r.resource]));
  for (const s of doc.steps) for (const r of s.rollback) {
    const filled = JSON.parse(JSON.stringify(r).replace(/\{\{resource:([^}]+)\}\}/g, (_, id) => String(created.get(id))));
    const back = await fetch(filled.url, { method: filled.method, headers: { ...filled.headers, authorization: `Bearer ${a.token}` }, body: JSON.stringify(filled.body) });
    expect(back.status).toBe(200);
  }
  expect(google.keywordsOf(g1.id).filter((k) => k.status !== "REMOVED").map((k) => k.text)).toEqual(["machine learning"]);
  expect(google.keywordsOf(g2.id).filter((k) => k.status !== "REMOVED")).toEqual([]);
});

test("a tampered plan fails the caller's check and is refused with its report; so is another account's report", async () => {
  const { a, plan } = await previewed(["Smart rings"]);
  const issued = await issue(a, plan.id);
  const [h, p, s] = issued.executor_plan.split(".");
  const claims = JSON.parse(Buffer.from(p, "base64url").toString());
  claims.plan.steps[0].request.url = "https://attacker.example/mutate";
  const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${s}`;
  const jwks = createLocalJWKSet((await gw.http.get("/.well-known/executor-keys")).body);
  await expect(jwtVerify(tampered, jwks, { audience: a.accountId })).rejects.toMatchObject({ code: "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" });

  const steps = [{ seq: 1, status: "succeeded" }];
  const r = await gw.http.post(RESULTS).set(a.auth).send({ executor_plan: tampered, executed_at: new Date().toISOString(), steps });
  expect([r.status, r.body.code, r.body.errors[0].path]).toEqual([422, "validation_failed", "executor_plan"]);
  const other = await gw.account();
  const foreign = await gw.http.post(RESULTS).set(other.auth).send({ executor_plan: issued.executor_plan, executed_at: new Date().toISOString(), steps });
  expect([foreign.status, foreign.body.errors[0].path]).toEqual([422, "executor_plan"]);
  expect((await gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth)).body.status).toBe("issued"); // nothing recorded
});

test("an expired plan fails the caller's check; a report after the report window is refused", async () => {
  const { a, plan } = await previewed(["Drone delivery"]);
  const issued = await issue(a, plan.id);
  const jwks = createLocalJWKSet((await gw.http.get("/.well-known/executor-keys")).body);
  const later = new Date(Date.parse(issued.expires_at) + 1000);
  await expect(jwtVerify(issued.executor_plan, jwks, { audience: a.accountId, currentDate: later })).rejects.toMatchObject({ code: "ERR_JWT_EXPIRED" });

  // The same plan as if issued long ago: signed with the service's key, expired beyond the report window.
  const { payload, protectedHeader } = await jwtVerify(issued.executor_plan, jwks, { audience: a.accountId });
  const old = await new SignJWT({ plan: payload.plan }).setProtectedHeader(protectedHeader as { alg: string }).setIssuer(payload.iss!).setAudience(a.accountId)
    .setJti(plan.id).setIssuedAt(Math.floor(Date.now() / 1000) - 7200).setExpirationTime(Math.floor(Date.now() / 1000) - 3700).sign(await importJWK(signingJwk, "EdDSA"));
  const r = await gw.http.post(RESULTS).set(a.auth).send({ executor_plan: old, executed_at: new Date().toISOString(), steps: [{ seq: 1, status: "succeeded" }] });
  expect([r.status, r.body.errors[0].path]).toEqual([422, "executor_plan"]);
  expect(r.body.detail).toMatch(/ERR_JWT_EXPIRED/);
});

test("targets changed since the preview: the caller skips the step and the run ends refused; a refused change is routed to review", async () => {
  const { a, g2, plan } = await previewed(["Home robots"]);
  const issued = await issue(a, plan.id);
  const steps = await execute(issued.plan.steps, a.token, { before: () => google.addKeyword({ adGroupId: g2.id, text: "someone else's", matchType: "EXACT" }) });
  expect(steps).toEqual([{ seq: 1, status: "skipped", precondition_held: false }]);
  const res = await gw.http.post(RESULTS).set(a.auth).send({ executor_plan: issued.executor_plan, executed_at: new Date().toISOString(), steps });
  expect(res.body).toMatchObject({ status: "refused", status_reason: expect.stringMatching(/stale plan/) });
  expect(google.keywordsOf(g2.id).map((k) => k.text)).toEqual(["someone else's"]);

  const second = await previewed(["Mesh routers"]);
  const plan2 = await issue(second.a, second.plan.id);
  google.refuseAdGroup(second.g2.id);
  const steps2 = await execute(plan2.plan.steps, second.a.token, { skipDryRun: true }); // a caller that trusts the preview's dry run
  const res2 = await gw.http.post(RESULTS).set(second.a.auth).send({ executor_plan: plan2.executor_plan, executed_at: new Date().toISOString(), steps: steps2 });
  expect(res2.body.status).toBe("partially_applied");
  expect(res2.body.results.filter((r: { review?: boolean }) => r.review).map((r: { error: string }) => r.error)).toEqual([expect.stringMatching(/Criteria type/)]);
});

test("bad reports name the field: an unknown step, a step twice, a missing step", async () => {
  const { a, plan } = await previewed(["Smart glasses"]);
  const issued = await issue(a, plan.id);
  const send = (steps: unknown[]) => gw.http.post(RESULTS).set(a.auth).send({ executor_plan: issued.executor_plan, executed_at: new Date().toISOString(), steps });
  expect((await send([{ seq: 9, status: "succeeded" }])).body.errors[0].path).toBe("steps.0.seq");
  expect((await send([{ seq: 1, status: "succeeded" }, { seq: 1, status: "failed" }])).body.errors[0].path).toBe("steps.1.seq");
  expect((await send([{ seq: 1, status: "succeeded", changes: [{ change_id: "nope", ok: true }] }])).body.errors[0].path).toBe("steps.0.changes.0.change_id");
  expect((await send([{ seq: 1, status: "done" }])).body.errors[0].path).toBe("steps.0.status");
});

test("Meta: whole-spec steps carry the merged spec, and their rollback writes back the spec read at preview", async () => {
  meta.addAdAccount({ id: "act_777000111", name: "Exec" });
  meta.addToken("EAA-exec", { accounts: ["777000111"] });
  meta.addInterest({ id: "6009000000001", name: "Quantum computing" });
  const campaign = meta.addCampaign({ accountId: "777000111", name: "C" });
  const prior = { geo_locations: { countries: ["US"] }, age_min: 30, flexible_spec: [{ interests: [{ id: "6003107902433", name: "Running" }] }] };
  const set = meta.addAdSet("120200000077700001", { accountId: "777000111", campaignId: campaign.id, name: "S", targeting: prior });
  const a = await gw.account();
  const { saveAuthorizedConnection } = await import("@trendgate/db");
  const { sealTokens } = await import("../../packages/connections/src/credentials.ts");
  await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "meta_ads", kind: "ads", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: "EAA-exec", tokenType: "bearer" }),
    tokenExpiresAt: new Date(Date.now() + 3600_000), scopes: ["ads_management"], externalAccount: {},
  }));
  await addTrend(gw, a.accountId, "Quantum computing");
  const M = "/api/integrations/ads/meta_ads";
  await gw.http.put(`${M}/selection`).set(a.auth).send({ trend_category: "tech", account_id: "act_777000111" });
  await gw.http.put(`${M}/mappings`).set(a.auth).send({ entities: [{ id: set.id, field: "interests" }] });
  const plan = (await gw.http.post(`${M}/preview`).set(a.auth)).body;
  const issued = (await gw.http.post(`${M}/executor/plans`).set(a.auth).send({ plan_id: plan.id })).body;
  const [step] = issued.plan.steps;
  expect(step.request.url).toBe(`${meta.url}/v27.0/${set.id}`);
  expect(step.request.body.targeting).toEqual({ ...prior, flexible_spec: [{ interests: [...prior.flexible_spec[0].interests, { id: "6009000000001", name: "Quantum computing" }] }] });
  expect(step.dry_run.body.execution_options).toEqual(["validate_only"]);
  expect(step.rollback).toHaveLength(1);
  expect(step.rollback[0].body.targeting).toEqual(prior);
});
