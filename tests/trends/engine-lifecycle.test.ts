import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

// A trend's lifecycle through real detection passes (stored signals, trend rows, trend_events): when it was detected,
// what its texts say about a bucket in progress, and its trend.ended.

const MIN = 60_000;
const HOUR = 60 * MIN;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };

/** `counts[i]` mentions in hour `from + i` (one signal a minute into the hour). */
async function seed(gw: TestGateway, accountId: string, topic: string, from: number, counts: number[]) {
  const signals = counts.map((count, i) => signal({ id: `${topic}-${i}`, topic, category: "tech/ai", count, observed_at: new Date(from + i * HOUR + MIN).toISOString() }));
  expect(await insertSignals(gw.deps.db, accountId, signals)).toBe(counts.length);
}
const eventsOf = async (gw: TestGateway, accountId: string) =>
  (await gw.deps.db.trendEventRecord.findMany({ where: { accountId }, orderBy: { createdAt: "asc" } })).map((e) => e.payload as any);

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

test("detected_at is the instant of detection, assessed_bucket the bucket's start; texts give a partial count as such", async () => {
  const a = await gw.account();
  const hour = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
  await seed(gw, a.accountId, "Agents", hour - 24 * HOUR, [...Array<number>(24).fill(100), 400]);
  const pass = new Date(hour + 38 * MIN);
  expect((await detectAccount(gw.deps, a.accountId, pass, options)).events).toBe(1);

  const [event] = await eventsOf(gw, a.accountId);
  expect(event).toMatchObject({ type: "trend.detected", timestamp: new Date(hour).toISOString() });
  // What arrived, and the hour it comes to with the rest as usual (about 400 + 22/60 x 100), not 400 scaled to 60 minutes (632).
  const [, rate] = /400 mentions in the first 38 minutes \((\d+) mentions\/h if the rest of the hour runs as usual\)/.exec(event.summary) ?? [];
  expect(Number(rate)).toBeGreaterThan(420);
  expect(Number(rate)).toBeLessThan(460);
  expect(event.velocity).toBeLessThan(400); // (the same projection) - ~100 expected, not 632 - 100
  const [trend] = (await gw.http.get("/api/trends").set(a.auth)).body.data;
  expect(trend).toMatchObject({ id: event.trend_id, detected_at: pass.toISOString(), assessed_bucket: new Date(hour).toISOString() });
  expect(trend.summary).toMatch(/in the first 38 minutes/);
});

test("a trend ends once, with a trend.ended carrying its id, 12 h after its last anomalous hour", async () => {
  const a = await gw.account();
  const burst = Math.floor(Date.now() / HOUR) * HOUR - 28 * HOUR;
  await seed(gw, a.accountId, "Chips", burst - 24 * HOUR, [...Array<number>(24).fill(100), 500, ...Array<number>(27).fill(100)]);
  // A pass two minutes into each hour (the bucket in progress is not scored yet: the closed hour decides).
  const ended: number[] = [];
  for (let k = 1; k <= 27; k++) {
    await detectAccount(gw.deps, a.accountId, new Date(burst + k * HOUR + 2 * MIN), options);
    const types = (await eventsOf(gw, a.accountId)).map((e) => e.type);
    if (types.includes("trend.ended") && !ended.length) ended.push(k);
  }
  const events = (await eventsOf(gw, a.accountId)).filter((e) => e.type === "trend.detected" || e.type === "trend.ended");
  expect(events.map((e) => e.type)).toEqual(["trend.detected", "trend.ended"]);
  expect(events[1].trend_id).toBe(events[0].trend_id);
  expect(events[1].summary).toMatch(/has ended/);
  // The burst hour was the last anomalous one; the closed hour starting 13 h after it is the first past 12 h, judged
  // once it has closed: at the pass 14 h after the burst hour began.
  expect(ended).toEqual([14]);
  const row = await gw.deps.db.trend.findFirstOrThrow({ where: { accountId: a.accountId } });
  expect(row).toMatchObject({ status: "ended", stage: "dormant" });
  // What the trigger and recovery windows read: the last pass that found it anomalous (the burst hour's, a pass
  // after it), and when it ended.
  expect(row.lastAnomalousAt).toEqual(new Date(burst + HOUR + 2 * MIN));
  expect(row.endedAt).toEqual(new Date(burst + 14 * HOUR + 2 * MIN));

  // A new burst in the last complete hour: the new trend.detected says when the topic's trend last ended.
  await insertSignals(gw.deps.db, a.accountId, [signal({ id: "Chips-back", topic: "Chips", category: "tech/ai", count: 1400, observed_at: new Date(burst + 27 * HOUR + 30 * MIN).toISOString() })]);
  expect((await detectAccount(gw.deps, a.accountId, new Date(), options)).events).toBe(1);
  const back = (await eventsOf(gw, a.accountId)).at(-1);
  expect(back).toMatchObject({ type: "trend.detected", trend_id: events[0].trend_id, previous_ended_at: row.endedAt!.toISOString() });
  expect(events[0].previous_ended_at).toBeNull();
});
