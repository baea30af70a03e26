import { insertSignals } from "@trendgate/db";
import { detectAccount } from "@trendgate/trends";
import { triggerFires } from "../../packages/webhooks/src/triggers.ts";
import { engineOptions } from "../../apps/worker/src/processors/trend-detection.ts";
import { overdispersedSlots } from "../../bench/eval-detection/arrivals.ts";
import { loadProductionCode, type ProductionCode } from "../../bench/eval-detection/code.ts";
import { productionSettings, replayTopic, type ReplayTopic, type Settings } from "../../bench/eval-detection/production.ts";
import { testConfig } from "../helpers/config.ts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";
import { noisy, prng } from "../helpers/synthetic.ts";

// `npm run eval:detection` must score what production does. The same topics (a week of hourly history, then hours
// whose mentions land in 5-minute batches) go through the evaluation's replay and through real detection passes
// (detectAccount against the database, as the worker runs it, every DETECTION_INTERVAL_SECONDS): the events, the
// passes that publish them, their severities and velocities, and whether a trend_detected subscription at
// threshold 0 receives them, must be the same.

const HOUR = 3_600_000;
const HISTORY_HOURS = 8 * 24;
const WINDOW_HOURS = 4;
/** A Monday 00:00 UTC, long past: the passes name their own `now`. */
const START = Date.UTC(2026, 8, 7);
const WINDOW_START = START + HISTORY_HOURS * HOUR;
const ROWS = HISTORY_HOURS + WINDOW_HOURS;

const daily = (level: number, amp: number, peak: number) =>
  Array.from({ length: ROWS }, (_, h) => level * (1 + amp * Math.cos((2 * Math.PI * ((h % 24) - peak)) / 24)));

/** Three topics: a burst in the window, the flapping reproduction (30, 20, 15 mentions in its first batches over a steady 100/h), a quiet one. */
function topics(): { name: string; topic: ReplayTopic }[] {
  const w = HISTORY_HOURS;
  const burst = noisy(11, daily(120, 0.3, 15));
  burst.splice(w, WINDOW_HOURS, 130, 450, 320, 160);
  const steady = noisy(12, Array(ROWS).fill(100));
  const quiet = noisy(13, daily(200, 0.4, 12));
  const made = [
    { name: "Eval burst", counts: burst },
    { name: "Eval flapping", counts: steady },
    { name: "Eval quiet", counts: quiet },
  ].map(({ name, counts }, i) => {
    const slots = overdispersedSlots(counts, 500 + i, 2.5);
    for (const hour of slots.slice(w - 1)) everyBatchAMention(hour);
    return { name, topic: { startMs: START, counts, slots: slots as readonly number[][], missing: new Set<number>(), category: "tech/eval" } };
  });
  // The reproduction: in the second window hour of the steady topic, 30 mentions land at :05, 20 at :10, 15 at :15.
  const flap = made[1].topic;
  const rand = prng(99);
  const rest = Array.from({ length: 9 }, () => 6 + Math.floor(rand() * 5));
  (flap.slots as number[][])[w + 1] = [30, 20, 15, ...rest];
  (flap.counts as number[])[w + 1] = 65 + rest.reduce((a, b) => a + b, 0);
  return made;
}

/**
 * A mention from the biggest batch into each empty one (the hour's total stays): the database's last_seen_at is the
 * wall clock, so there every batch counts as a mention this bucket; the evaluation's selection must see the same.
 */
function everyBatchAMention(hour: number[]) {
  for (let j = 0; j < hour.length; j++) {
    if (hour[j] > 0) continue;
    const k = hour.indexOf(Math.max(...hour));
    hour[k]--;
    hour[j]++;
  }
}

interface Seen {
  type: string;
  atMs: number;
  severity: string;
  velocity: number;
  delivered: boolean;
}

let gw: TestGateway;
let code: ProductionCode;
let settings: Settings;
beforeAll(async () => {
  gw = await startGateway();
  code = await loadProductionCode();
  settings = productionSettings(code);
});
afterAll(async () => { await gw.close(); });

test("the evaluation runs with the worker's detection settings", () => {
  const o = engineOptions(testConfig());
  expect(settings.detection).toEqual({ bucketSeconds: o.bucketSeconds, baselineHours: o.baselineHours, minMentionsPerHour: o.minMentionsPerHour, dailySeasonality: o.dailySeasonality });
  expect(settings.rules).toEqual({ velocityEventStep: o.velocityEventStep, velocityEventMinSeconds: o.velocityEventMinSeconds, severityHoldSeconds: o.severityHoldSeconds, endAfterHours: o.endAfterHours });
  expect(settings.intervalSeconds).toBe(testConfig().DETECTION_INTERVAL_SECONDS);
});

test("the evaluation's replay and real detection passes publish the same events for the same series", async () => {
  const made = topics();
  const sub = settings.subscription;
  const interval = settings.intervalSeconds * 1000;
  // A batch lands at its slot's end; the evaluation's shard selection counts it from then (last_seen_at).
  for (const { topic } of made) for (const s of topic.slots.slice(HISTORY_HOURS - 1)) expect(Math.min(...s)).toBeGreaterThan(0);

  const expected = new Map<string, Seen[]>();
  for (const { name, topic } of made) {
    const [events] = replayTopic(code, settings, topic, [settings.intervalSeconds], WINDOW_START);
    expected.set(name, events.map((e) => ({
      type: e.type, atMs: e.atMs, severity: e.severity, velocity: e.velocity, delivered: e.delivered,
    })));
  }
  // The replay must have something to compare: the burst is detected.
  expect(expected.get("Eval burst")!.some((e) => e.type === "trend.detected")).toBe(true);

  const a = await gw.account();
  const options = engineOptions(testConfig());
  // The history before the window, one signal per hour; then each 5-minute batch lands when its slot ends.
  const history = made.flatMap(({ name, topic }) =>
    topic.counts.slice(0, HISTORY_HOURS).flatMap((count, h) => count > 0 ? [signal({ id: `${name}-h${h}`, topic: name, category: topic.category, count, observed_at: new Date(START + h * HOUR + 30 * 60_000).toISOString() })] : []),
  );
  for (let i = 0; i < history.length; i += 500) await insertSignals(gw.deps.db, a.accountId, history.slice(i, i + 500));

  const actual = new Map<string, Seen[]>(made.map(({ name }) => [name, []]));
  const known = new Set<string>();
  const slotMs = HOUR / made[0].topic.slots[HISTORY_HOURS].length;
  let landed = 0; // batches landed since the window began
  for (let now = WINDOW_START; now <= WINDOW_START + WINDOW_HOURS * HOUR; now += interval) {
    for (; WINDOW_START + (landed + 1) * slotMs <= now && landed < WINDOW_HOURS * (HOUR / slotMs); landed++) {
      const row = HISTORY_HOURS + Math.floor((landed * slotMs) / HOUR);
      const j = landed % (HOUR / slotMs);
      const batch = made.map(({ name, topic }) => signal({
        id: `${name}-r${row}-s${j}`, topic: name, category: topic.category, count: topic.slots[row][j],
        observed_at: new Date(WINDOW_START + landed * slotMs + 60_000).toISOString(),
      }));
      await insertSignals(gw.deps.db, a.accountId, batch);
    }
    const stats = await detectAccount(gw.deps, a.accountId, new Date(now), options);
    if (!stats.events) continue;
    const rows = await gw.deps.db.trendEventRecord.findMany({ where: { accountId: a.accountId } });
    for (const r of rows) {
      if (known.has(r.id)) continue;
      known.add(r.id);
      const e = r.payload as any;
      actual.get(e.trend_name)!.push({ type: e.type, atMs: now, severity: e.severity, velocity: e.velocity, delivered: triggerFires(sub, e) });
    }
  }
  for (const { name } of made) expect({ name, events: actual.get(name) }).toEqual({ name, events: expected.get(name) });
}, 180_000);
