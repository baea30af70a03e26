import { renderBriefing, type BriefingData } from "../../packages/trends/src/briefing/index.ts";

// A briefing opened while the trend's hour is in progress states what arrived so far and the rate it comes to with
// the rest of the hour as usual, the figure the trend event and detection use: never the first minutes scaled to an
// hour (120 mentions in 15 minutes is not 480 an hour when 40 an hour is usual).

const at = new Date("2026-12-01T10:00:00Z");
const data = (observed: number, current: number): BriefingData => ({
  trend: {
    id: "trend_1", name: "trail shoes", category: "sports", status: "open", severity: "high", stage: "rising", velocity: 110,
    acceleration: 0, baseline: 40, current, anomalyScore: 12, peakVelocity: 110, sentiment: null, detectedAt: at, bucketStart: at, observed,
  } as BriefingData["trend"],
  series: [{ start: at, count: current }],
  examples: [],
  drivers: { terms: [], sources: [], top_posts: [], sentiment: null },
  bucketSeconds: 3600,
});
const page = (d: BriefingData) => renderBriefing(d, { generatedAt: at, expiresAt: new Date(at.getTime() + 86_400_000) }).replace(/<[^>]+>/g, " ");

test("a quarter of an hour in: 120 so far, 150 mentions/h with the rest as usual (not 480), 3.8x the usual rate", () => {
  const text = page(data(0.25, 120));
  expect(text).toContain("120 mentions in the first 15 minutes (150 mentions/h if the rest of the hour runs as usual)");
  expect(text).not.toContain("480");
  expect(text).toContain("3.8×");
});

test("a closed hour: its count is its rate", () => {
  const text = page(data(1, 150));
  expect(text).toContain("150 mentions/h");
  expect(text).not.toContain("in the first");
});
