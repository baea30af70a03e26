import { createLocalJWKSet, jwtVerify } from "jose";
import { generateExecutorSigningKey } from "@trendgate/ads";
import type { ExecutorRequest, TargetingField } from "@trendgate/connector-ads";
import { saveAuthorizedConnection } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { sealTokens } from "../../../packages/connections/src/credentials.ts";
import { startWorkers, type RunningWorkers } from "../../../apps/worker/src/run-workers.ts";
import { waitFor } from "../../helpers/config.ts";
import { startGateway, type TestGateway } from "../../helpers/gateway.ts";
import type { PeerFaults } from "../../peers/faults.ts";
import { addTrend } from "../kit.ts";

// The ads scenario suite, written once and run per provider: through the gateway and the ads-applies
// worker against the provider's local server, each scenario on a fresh account:
// - preview -> apply -> the provider's targeting equals the plan's "after"; the same apply again -> applied once;
// - a target changed between preview and apply -> refused as stale, nothing written;
// - the provider refuses one entity's change -> partially_applied, the refusal marked for review;
// - rollback -> the provider's targeting equals the prior state;
// - the provider throttles -> the apply waits what the provider said (or the retry schedule), then ends applied,
//   each call made once;
// - an executor plan: the caller verifies it with the published JWKS, executes each step's request against the
//   provider with its own token, reports the results; the provider's targeting then equals the plan's after and
//   the plan ends applied.
// A provider plugs in with an AdsScenarioPeer: how to start its local server and drive it.

export interface ScenarioCall { at: number; throttled: boolean; write: boolean; dryRun: boolean; ok: boolean }

export interface AdsScenarioPeer {
  /** The registry id (`/api/integrations/ads/{id}`). */
  provider: string;
  /** Starts the local server; `env` points the gateway and workers at it (base URL, client id and secret...). */
  start(): Promise<{ env: Record<string, string>; close(): Promise<void> }>;
  /**
   * A fresh ad account with two entities to map (the first with one targeting item already) and a token that
   * sees it; `phrases` are the trend names the test will use: resolvable through the provider's lookup.
   */
  seedAccount(phrases: string[]): Promise<{ token: string; adAccountId: string; entities: { id: string; field: TargetingField }[]; scopes?: string[]; tokenExpiresAt?: Date }>;
  /** The entity's targeting items at the provider now, as texts (the plan's diff shows the same texts). */
  itemsOf(entityId: string): string[];
  /** Changes the entity's targeting behind the plan's back. */
  tamper(entityId: string): void;
  /** The provider refuses, with its validation error, real writes that add targeting to this entity from now on. */
  refuseWritesTo(entityId: string): void;
  /** The provider's next API call answers its throttle; how long the caller must wait (0: no hint given). */
  throttleNext(): { minWaitMs: number };
  /** The running stand-in's failures around a write (tests/ads/ads-standins-failures.test.ts). */
  faults(): PeerFaults;
  /** The API calls made for this ad account so far, in order. */
  calls(adAccountId: string): ScenarioCall[];
  /** The headers an executor's caller adds to a plan's request: where the provider takes its token (default Bearer). */
  executorHeaders?(token: string): Record<string, string>;
  /** Whether the provider's answer to an executor step says it was written (default: a 2xx status). */
  executorStepOk?(status: number, body: unknown): boolean;
}

/** A connected account of `peer` with trends named `phrases`, its selection and mappings saved, and a preview made. */
export async function previewPlan(gw: TestGateway, peer: AdsScenarioPeer, phrases: string[]) {
  const base = `/api/integrations/ads/${peer.provider}`;
  const seeded = await peer.seedAccount(phrases);
  const a = await gw.account();
  await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: peer.provider, kind: "ads", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: seeded.token, tokenType: "bearer" }),
    tokenExpiresAt: seeded.tokenExpiresAt ?? new Date(Date.now() + 3600_000), scopes: seeded.scopes ?? [], externalAccount: {},
  }));
  for (const name of phrases) await addTrend(gw, a.accountId, name);
  expect((await gw.http.put(`${base}/selection`).set(a.auth).send({ trend_category: "tech", account_id: seeded.adAccountId })).status).toBe(200);
  expect((await gw.http.put(`${base}/mappings`).set(a.auth).send({ entities: seeded.entities })).status).toBe(200);
  const plan = await gw.http.post(`${base}/preview`).set(a.auth);
  expect([plan.status, plan.body.detail]).toEqual([201, undefined]);
  return { a, ...seeded, plan: plan.body };
}

export function adsScenarios(peer: AdsScenarioPeer) {
  const BASE = `/api/integrations/ads/${peer.provider}`;
  let gw: TestGateway;
  let workers: RunningWorkers;
  let server: { close(): Promise<void> };

  const PUBLIC_BASE_URL = "https://trendgate.test";
  const credentialHeaders = (token: string) => peer.executorHeaders?.(token) ?? { authorization: `Bearer ${token}` };
  const stepOk = (status: number, body: unknown) => peer.executorStepOk?.(status, body) ?? (status >= 200 && status < 300);

  beforeAll(async () => {
    const started = await peer.start();
    server = started;
    gw = await startGateway({
      ...started.env, OUTBOUND_ALLOWLIST: "127.0.0.1", OUTBOX_RETRY_SCHEDULE_SECONDS: "0.2,0.2,0.2", EXECUTOR_SIGNING_KEY: await generateExecutorSigningKey(), PUBLIC_BASE_URL,
    });
    workers = startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["ads-applies"]);
  });
  afterAll(async () => { await workers?.close(); await gw?.close(); await server?.close(); });

  async function previewed(phrases: string[]) {
    const previewedPlan = await previewPlan(gw, peer, phrases);
    expect(previewedPlan.plan.changes.length).toBeGreaterThan(0);
    return previewedPlan;
  }

  /** The apply request a careful caller sends: the plan's hash acknowledged where the provider has no dry run. */
  const applyBody = (plan: { id: string; plan_hash?: string; requires_acknowledgement?: boolean }) =>
    ({ plan_id: plan.id, ...(plan.requires_acknowledgement ? { acknowledged_plan_hash: plan.plan_hash } : {}) });
  const finalPlan = (a: { auth: Record<string, string> }, id: string, timeoutMs = 20_000) =>
    waitFor(async () => { const p = (await gw.http.get(`${BASE}/plans/${id}`).set(a.auth)).body; return p.status !== "applying" ? p : null; }, { timeoutMs });
  const sorted = (xs: string[]) => [...xs].sort();
  const realWrites = (adAccountId: string) => peer.calls(adAccountId).filter((c) => c.write && !c.dryRun && c.ok);

  test(`${peer.provider}: preview -> apply leaves the provider's targeting equal to the plan's after; applied once`, async () => {
    const { a, adAccountId, entities, plan } = await previewed(["AI agents", "Foldable phones"]);
    expect(plan.diff.map((d: { entity_id: string; before: string[] }) => [d.entity_id, sorted(d.before)])).toEqual(entities.map((e) => [e.id, sorted(peer.itemsOf(e.id))]));
    expect(realWrites(adAccountId)).toHaveLength(0); // a preview writes nothing
    const res = await gw.http.post(`${BASE}/apply`).set(a.auth).set("Idempotency-Key", `apply-${plan.id}`).send(applyBody(plan));
    expect([res.status, res.body.status]).toEqual([202, "applying"]);
    const done = await finalPlan(a, plan.id);
    expect([done.status, done.status_reason]).toEqual(["applied", null]);
    expect(done.results.every((r: { ok: boolean }) => r.ok)).toBe(true);
    for (const d of plan.diff) expect(sorted(peer.itemsOf(d.entity_id))).toEqual(sorted(d.after));
    const writes = realWrites(adAccountId).length;
    expect(writes).toBe(plan.calls.length);

    const replay = await gw.http.post(`${BASE}/apply`).set(a.auth).set("Idempotency-Key", `apply-${plan.id}`).send(applyBody(plan));
    expect([replay.status, replay.body.run_id]).toEqual([202, res.body.run_id]);
    const again = await gw.http.post(`${BASE}/apply`).set(a.auth).send(applyBody(plan));
    expect([again.status, again.body.code]).toEqual([409, "conflict"]);
    expect(realWrites(adAccountId)).toHaveLength(writes);
  });

  test(`${peer.provider}: a target changed after the preview -> refused as stale, nothing written`, async () => {
    const { a, adAccountId, entities, plan } = await previewed(["Smart glasses"]);
    peer.tamper(entities[1].id);
    const after = entities.map((e) => sorted(peer.itemsOf(e.id)));
    expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send(applyBody(plan))).status).toBe(202);
    const done = await finalPlan(a, plan.id);
    expect(done.status).toBe("refused");
    expect(done.status_reason).toMatch(/stale plan/);
    expect(entities.map((e) => sorted(peer.itemsOf(e.id)))).toEqual(after);
    expect(realWrites(adAccountId)).toHaveLength(0);
  });

  test(`${peer.provider}: one entity's change refused by the provider -> partially_applied, marked for review`, async () => {
    const { a, entities, plan } = await previewed(["Home robots"]);
    const [kept, refused] = entities;
    peer.refuseWritesTo(refused.id);
    const before = sorted(peer.itemsOf(refused.id));
    expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send(applyBody(plan))).status).toBe(202);
    const done = await finalPlan(a, plan.id);
    expect(done.status).toBe("partially_applied");
    expect(done.status_reason).toMatch(/review/);
    const byId = new Map(plan.changes.map((c: { id: string; entity_id: string }) => [c.id, c.entity_id]));
    for (const r of done.results as { change_id: string; ok: boolean; review?: boolean; error: string | null }[]) {
      if (byId.get(r.change_id) === refused.id) expect([r.ok, r.review, typeof r.error]).toEqual([false, true, "string"]);
      else expect(r.ok).toBe(true);
    }
    expect(sorted(peer.itemsOf(kept.id))).toEqual(sorted(plan.diff.find((d: { entity_id: string }) => d.entity_id === kept.id).after));
    expect(sorted(peer.itemsOf(refused.id))).toEqual(before);
  });

  test(`${peer.provider}: rollback restores the prior state, applied the same way`, async () => {
    const { a, entities, plan } = await previewed(["Mesh routers"]);
    const prior = entities.map((e) => sorted(peer.itemsOf(e.id)));
    expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send(applyBody(plan))).status).toBe(202);
    expect((await finalPlan(a, plan.id)).status).toBe("applied");
    const rb = await gw.http.post(`${BASE}/plans/${plan.id}/rollback`).set(a.auth);
    expect([rb.status, rb.body.rollback_of]).toEqual([201, plan.id]);
    expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send(applyBody(rb.body))).status).toBe(202);
    expect((await finalPlan(a, rb.body.id)).status).toBe("applied");
    expect(entities.map((e) => sorted(peer.itemsOf(e.id)))).toEqual(prior);
  });

  test(`${peer.provider}: a throttle is waited out as the provider says, then the apply ends applied, each call made once`, async () => {
    const { a, adAccountId, plan } = await previewed(["Drone delivery"]);
    const { minWaitMs } = peer.throttleNext();
    const from = peer.calls(adAccountId).length;
    expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send(applyBody(plan))).status).toBe(202);
    const done = await finalPlan(a, plan.id, 30_000);
    expect(done.status).toBe("applied");
    for (const d of plan.diff) expect(sorted(peer.itemsOf(d.entity_id))).toEqual(sorted(d.after));
    const calls = peer.calls(adAccountId).slice(from);
    const t = calls.findIndex((c) => c.throttled);
    expect(t).toBeGreaterThanOrEqual(0);
    expect(calls[t + 1].at - calls[t].at).toBeGreaterThanOrEqual(minWaitMs * 0.9);
    expect(realWrites(adAccountId)).toHaveLength(plan.calls.length);
  });

  test(`${peer.provider}: an executor plan, verified with the published keys and run with the caller's own token, ends applied`, async () => {
    const { a, token, plan } = await previewed(["Quantum computing", "Smart rings"]);
    const issued = await gw.http.post(`${BASE}/executor/plans`).set(a.auth).send(applyBody(plan));
    expect([issued.status, issued.body.detail]).toEqual([201, undefined]);
    const jwks = createLocalJWKSet((await gw.http.get("/.well-known/executor-keys")).body);
    const { payload } = await jwtVerify(issued.body.executor_plan, jwks, { audience: a.accountId, issuer: PUBLIC_BASE_URL });
    type Step = { seq: number; request: ExecutorRequest; dry_run: ExecutorRequest | null; precondition: { targets: { entity_id: string; items: { text: string }[] }[] } };
    const { steps } = payload.plan as { steps: Step[] };
    expect(steps).toHaveLength(plan.calls.length);
    // The plan carries no credentials: neither the token nor any other secret the caller adds (a developer token).
    for (const secret of [token, ...Object.values(credentialHeaders(token))]) expect(JSON.stringify(steps)).not.toContain(secret);

    const send = async (r: ExecutorRequest) => {
      const res = await fetch(r.url, {
        method: r.method, headers: { ...r.headers, ...credentialHeaders(token) }, ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
      });
      const text = await res.text();
      let body: unknown = null;
      try { body = text ? JSON.parse(text) : null; } catch { body = null; }
      return { status: res.status, ok: stepOk(res.status, body) };
    };
    const report = [];
    for (const s of steps) {
      // The caller's precondition check: the targets as read at preview, else the step is skipped.
      const held = s.precondition.targets.every((t) => JSON.stringify(sorted(peer.itemsOf(t.entity_id))) === JSON.stringify(sorted(t.items.map((i) => i.text))));
      if (!held) { report.push({ seq: s.seq, status: "skipped", precondition_held: false }); continue; }
      if (s.dry_run) expect((await send(s.dry_run)).ok).toBe(true);
      const r = await send(s.request);
      report.push({ seq: s.seq, status: r.ok ? "succeeded" : "failed", http_status: r.status });
    }
    expect(report.map((r) => r.status)).toEqual(steps.map(() => "succeeded"));
    for (const d of plan.diff) expect(sorted(peer.itemsOf(d.entity_id))).toEqual(sorted(d.after));

    const res = await gw.http.post("/api/integrations/ads/executor/results").set(a.auth).send({ executor_plan: issued.body.executor_plan, executed_at: new Date().toISOString(), steps: report });
    expect([res.status, res.body.status]).toEqual([200, "applied"]);
    expect((await gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth)).body.status).toBe("applied");
  });
}
