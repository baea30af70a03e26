import { createLogger } from "@trendgate/logger";
import { startWorkers, type RunningWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { googleAdsPeer } from "./scenarios/google-ads-peer.ts";
import { linkedInAdsPeer } from "./scenarios/linkedin-ads-peer.ts";
import { metaAdsPeer } from "./scenarios/meta-ads-peer.ts";
import { microsoftAdsPeer } from "./scenarios/microsoft-ads-peer.ts";
import { pinterestAdsPeer } from "./scenarios/pinterest-ads-peer.ts";
import { snapAdsPeer } from "./scenarios/snap-ads-peer.ts";
import { tikTokAdsPeer } from "./scenarios/tiktok-ads-peer.ts";
import { previewPlan, type AdsScenarioPeer } from "./scenarios/suite.ts";

// The seven ads providers failing around a write as their real APIs do (tests/peers/faults.ts), through the real
// apply path (apply route -> ads-applies outbox -> worker -> the provider's stand-in):
// - the write was applied and its answer lost (connection reset, a front end's 502 page): the next attempt reads the
//   targets, finds the write made and does not send it again;
// - a restart window (503 pages, or connections refused) before anything was applied: retried, each write made once;
// - the same write reaching the provider twice (its front end answered 504 and the backend applied it after our
//   retry had written it again): the provider's targeting changes once, and the plan ends applied.

const PEERS: AdsScenarioPeer[] = [googleAdsPeer, metaAdsPeer, tikTokAdsPeer, linkedInAdsPeer, microsoftAdsPeer, snapAdsPeer, pinterestAdsPeer];

let gw: TestGateway;
let workers: RunningWorkers;
const servers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  const env: Record<string, string> = {};
  for (const peer of PEERS) {
    const started = await peer.start();
    servers.push(started);
    Object.assign(env, started.env);
  }
  // Long enough in all (about 3.8 s, jitter ±20 %) to outlast the restart windows below.
  gw = await startGateway({ ...env, OUTBOUND_ALLOWLIST: "127.0.0.1", OUTBOX_RETRY_SCHEDULE_SECONDS: "0.3,0.5,1,1,1" });
  workers = startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["ads-applies"]);
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await gw?.close();
  for (const s of servers) await s.close();
});

async function previewed(peer: AdsScenarioPeer, phrases: string[]) {
  const base = `/api/integrations/ads/${peer.provider}`;
  const { a, plan, ...seeded } = await previewPlan(gw, peer, phrases);
  /** Applies the plan (acknowledged where the provider has no dry run) and waits for its end. */
  const apply = async () => {
    const p = plan;
    const res = await gw.http.post(`${base}/apply`).set(a.auth).send({ plan_id: p.id, ...(p.requires_acknowledgement ? { acknowledged_plan_hash: p.plan_hash } : {}) });
    expect(res.status).toBe(202);
    return waitFor(async () => { const r = (await gw.http.get(`${base}/plans/${p.id}`).set(a.auth)).body; return r.status !== "applying" ? r : null; }, { timeoutMs: 30_000 });
  };
  /** The run's attempts as recorded on the outbox, once the last is (the plan's end is written before it). */
  const attempts = () => waitFor(async () => {
    const rows = await gw.deps.db.outboxAttempt.findMany({ where: { accountId: a.accountId }, orderBy: { attempt: "asc" } });
    return rows.length && rows.at(-1)!.outcome !== "retrying" ? rows.map((x) => x.outcome) : null;
  }, { timeoutMs: 10_000 });
  return { ...seeded, plan, apply, attempts };
}

const sorted = (xs: string[]) => [...xs].sort();
/** Write requests that reached the provider for this ad account (refused ones included, dry runs not). */
const writes = (peer: AdsScenarioPeer, adAccountId: string) => peer.calls(adAccountId).filter((c) => c.write && !c.dryRun).length;
const expectAfter = (peer: AdsScenarioPeer, plan: { diff: { entity_id: string; after: string[] }[] }) => {
  for (const d of plan.diff) expect(sorted(peer.itemsOf(d.entity_id))).toEqual(sorted(d.after));
};

describe.each(PEERS.map((p) => [p.provider, p] as const))("%s", (_name, peer) => {
  test.each(["reset", "bad_gateway"] as const)("a write applied, then its answer lost (%s): read again, found made, not sent again", async (kind) => {
    const { adAccountId, plan, apply, attempts } = await previewed(peer, ["AI agents", "Smart rings"]);
    peer.faults().after(kind);
    const fired = peer.faults().fired.after;
    const done = await apply();

    expect([done.status, done.status_reason]).toEqual(["applied", null]);
    expect(peer.faults().fired.after).toBe(fired + 1);
    expect(writes(peer, adAccountId)).toBe(plan.calls.length); // the lost write was not sent a second time
    expectAfter(peer, plan);
    expect(done.results.every((r: { ok: boolean }) => r.ok)).toBe(true);
    expect(done.results.some((r: { note?: string }) => /found applied/.test(r.note ?? ""))).toBe(true);
    expect(await attempts()).toEqual(["retrying", "succeeded"]);
  });

  test("a restart window (503 pages) before anything was applied: retried, each write made once", async () => {
    const { adAccountId, plan, apply, attempts } = await previewed(peer, ["Mesh routers"]);
    const refused = peer.faults().fired.window;
    peer.faults().restartWindow(1200, 503);
    const done = await apply();

    expect(done.status).toBe("applied");
    expect(peer.faults().fired.window).toBeGreaterThan(refused);
    expect(writes(peer, adAccountId)).toBe(plan.calls.length);
    expectAfter(peer, plan);
    const outcomes = await attempts();
    expect(outcomes.at(-1)).toBe("succeeded");
    expect(outcomes.slice(0, -1).every((o) => o === "retrying")).toBe(true);
  });

  test("a restart (connections refused) before anything was applied: retried, each write made once", async () => {
    const { adAccountId, plan, apply } = await previewed(peer, ["Drone delivery"]);
    const down = peer.faults().restart(1200);
    const done = await apply();
    await down;

    expect(done.status).toBe("applied");
    expect(writes(peer, adAccountId)).toBe(plan.calls.length);
    expectAfter(peer, plan);
  });

  test("the same write reaching the provider twice (504, applied late, after our retry wrote it): targeting changed once", async () => {
    const { adAccountId, plan, apply } = await previewed(peer, ["Quantum computing", "Foldable phones"]);
    const late = peer.faults().fired.late;
    peer.faults().late(3000); // well after the first retry (0.3 s) has read and written again
    const done = await apply();
    await peer.faults().settled();

    expect([done.status, done.status_reason]).toEqual(["applied", null]);
    expect(peer.faults().fired.late).toBe(late + 1);
    expect(writes(peer, adAccountId)).toBe(plan.calls.length + 1); // the first write arrived twice
    expectAfter(peer, plan); // each item once
  });
});
