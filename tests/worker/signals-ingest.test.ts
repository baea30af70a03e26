import { createLogger } from "@trendgate/logger";
import { startWorkers, type RunningWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
let workers: RunningWorkers;
beforeAll(async () => {
  gw = await startGateway();
  workers = startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["signals-ingest"]);
});
afterAll(async () => { await workers.close(); await gw.close(); });

test("ingested signals are stored by a worker; re-sent signals are not stored twice", async () => {
  const a = await gw.account();
  const batch = [signal({ id: "w-1", count: 5 }), signal({ id: "w-2", count: 7, sentiment: 0.4, link: "https://example.com/p" })];
  expect((await gw.http.post("/api/signals").set(a.auth).send({ signals: batch })).status).toBe(202);
  await waitFor(async () => (await gw.deps.db.signal.count({ where: { accountId: a.accountId } })) === 2);
  expect((await gw.http.post("/api/signals").set(a.auth).send({ signals: [batch[0], signal({ id: "w-3" })] })).status).toBe(202);
  await waitFor(async () => (await gw.deps.db.signal.count({ where: { accountId: a.accountId } })) === 3);
  const rows = await gw.deps.db.signal.findMany({ where: { accountId: a.accountId }, orderBy: { externalId: "asc" } });
  expect(rows.map((r) => [r.externalId, r.count])).toEqual([["w-1", 5], ["w-2", 7], ["w-3", 12]]);
  expect(rows[1].sentiment).toBeCloseTo(0.4);
});

test("a worker started for an unknown queue refuses with the list of known queues", () => {
  expect(() => startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["nope"])).toThrow(/Unknown queue\(s\): nope. Known: signals-ingest/);
});
