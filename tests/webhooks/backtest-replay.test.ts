// The backtest asks the detector about a firing a trigger window holds only when the answer changes what is
// delivered (issue 44: a windowed backtest's reads were most of its cost, and its load on other accounts). Checked
// against a plain replay that knows every answer up front: the same deliveries, at the same times, from far fewer
// questions, across page boundaries and with firings that did not last letting later ones through.
import { SubscriptionReplay, type BacktestDelivery, type BacktestRules, type PastEvent } from "@trendgate/webhooks";
import { trendEvent } from "../helpers/stack.ts";

const MIN = 60_000;
const WINDOW = 30;
const COOLDOWN_S = 3600;
const rules: BacktestRules = {
  triggerType: "trend_detected", thresholdValue: 0, category: null, deliveryMode: "instant_stream",
  cooldownSeconds: COOLDOWN_S, triggerWindowMinutes: WINDOW, recoveryWindowMinutes: 0,
};

/** 600 detections, 2-11 minutes apart; about a third did not last their window (a fixed pseudo-random draw). */
const t0 = Date.UTC(2026, 10, 1);
let t = t0;
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const history: PastEvent[] = Array.from({ length: 600 }, (_, i) => {
  t += (2 + Math.floor(rand() * 10)) * MIN;
  return { event: trendEvent("acc_replay", { id: `evt_${i}`, type: "trend.detected", trend_id: `trend_${i}` }), at: new Date(t) };
});
const lasted = new Map(history.map((p) => [p, rand() > 0.35]));

/** What the live path does, with every answer known: window first, then the cooldown on the window's end. */
function reference() {
  const out: { id: string; at: number }[] = [];
  let lastFired: number | null = null;
  const suppressed = { cooldown: 0, trigger_window: 0 };
  for (const p of history) {
    const due = p.at.getTime() + WINDOW * MIN;
    if (!lasted.get(p)) { suppressed.trigger_window++; continue; }
    if (lastFired !== null && lastFired + COOLDOWN_S * 1000 > due) { suppressed.cooldown++; continue; }
    lastFired = due;
    out.push({ id: p.event.id, at: due });
  }
  return { out, suppressed };
}

async function lazily(pageSize: number) {
  const out: { id: string; at: number }[] = [];
  let questions = 0;
  const replay = new SubscriptionReplay(rules, (d: BacktestDelivery) => out.push({ id: d.event.id, at: d.at.getTime() }), async (firings) => {
    questions += firings.length;
    return firings.map((p) => lasted.get(p)!);
  });
  for (let i = 0; i < history.length; i += pageSize) await replay.push(history.slice(i, i + pageSize));
  await replay.finish();
  return { out, questions, suppressed: replay.suppressed };
}

test.each([600, 97, 1])("the same deliveries as a replay that knows every answer, from far fewer questions (pages of %i)", async (pageSize) => {
  const want = reference();
  const got = await lazily(pageSize);
  expect(want.out.length).toBeGreaterThan(20); // the history exercises the cooldown, not only the window
  expect(want.suppressed.trigger_window).toBeGreaterThan(100);
  expect(got.out).toEqual(want.out);
  // Every firing is accounted for once; a firing the cooldown suppresses anyway counts under cooldown, unasked.
  expect(got.out.length + got.suppressed.cooldown + got.suppressed.trigger_window).toBe(history.length);
  expect(got.suppressed.trigger_window).toBeLessThan(want.suppressed.trigger_window);
  expect(got.questions).toBeLessThan(history.length / 2);
});

test("without a cooldown every held firing is asked about once, and each that lasted is delivered at its window's end", async () => {
  const asked: PastEvent[] = [];
  const out: BacktestDelivery[] = [];
  const replay = new SubscriptionReplay({ ...rules, cooldownSeconds: 0 }, (d) => out.push(d), async (firings) => {
    asked.push(...firings);
    return firings.map((p) => lasted.get(p)!);
  });
  await replay.push(history.slice(0, 300));
  await replay.push(history.slice(300));
  await replay.finish();
  expect(new Set(asked).size).toBe(history.length);
  expect(asked.length).toBe(history.length);
  const kept = history.filter((p) => lasted.get(p));
  expect(out.map((d) => [d.event.id, d.at.getTime()])).toEqual(kept.map((p) => [p.event.id, p.at.getTime() + WINDOW * MIN]));
  expect(replay.suppressed.trigger_window).toBe(history.length - kept.length);
});

test("a digest names what the worker delivers: one publication's firings meet the cooldown strongest first, and the held firing gives way to a faster one", async () => {
  const digest: BacktestRules = { ...rules, deliveryMode: "cooldown_digest", triggerWindowMinutes: 0 };
  const ev = (id: string, trend_name: string, severity: "low" | "medium" | "high", velocity: number) =>
    trendEvent("acc_digest", { id, type: "trend.detected", trend_id: `trend_${trend_name}`, trend_name, severity, velocity });
  // One pass publishes a medium and a high firing (stored in id order), a later one a low but faster firing.
  const pass = new Date(t0);
  const events: PastEvent[] = [
    { event: ev("evt_1", "Medium", "medium", 500), at: pass },
    { event: ev("evt_2", "High", "high", 100), at: pass },
    { event: ev("evt_3", "Faster", "low", 900), at: new Date(t0 + 10 * MIN) },
  ];
  const out: BacktestDelivery[] = [];
  const replay = new SubscriptionReplay(digest, (d) => out.push(d), async (f) => f.map(() => true));
  // The publication straddles two pages.
  await replay.push(events.slice(0, 1));
  await replay.push(events.slice(1));
  await replay.finish();
  // The worker fires the high one first (delivered at once); the medium one is held, then replaced by the faster one.
  expect(out.map((d) => [d.event.trend_name, d.at.getTime()])).toEqual([["High", t0], ["Faster", t0 + COOLDOWN_S * 1000]]);
  expect(replay.suppressed.cooldown).toBe(1);
});
