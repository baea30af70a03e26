import {
  labelWindows,
  normalisedScore,
  probationLength,
  scaledSigmoid,
  scoreSeries,
} from "../../bench/eval-detection/scoring.ts";

// NAB standard-profile scoring used by `npm run eval:detection`, checked on hand-computed cases.
// One series of 1,000 rows with an anomaly at row 500: window 10 % = 100 rows -> [450, 550] (101 rows);
// rows before 150 (15 %) are the unscored probation.
const LENGTH = 1000;
const ONE = labelWindows(LENGTH, [500]);

describe("NAB windows", () => {
  it("spans 10 % of the series per anomaly, centred on it, clipped and merged", () => {
    expect(ONE).toEqual([{ start: 450, end: 550 }]);
    expect(labelWindows(LENGTH, [700, 300])).toEqual([{ start: 275, end: 325 }, { start: 675, end: 725 }]);
    expect(labelWindows(100, [97])).toEqual([{ start: 92, end: 99 }]);
    // 100 rows, 2 anomalies: 5-row windows [48, 52] and [50, 54] overlap and merge.
    expect(labelWindows(100, [50, 52])).toEqual([{ start: 48, end: 54 }]);
    // A first window starting inside the probation (rows 0-14 of 100) is deleted, as NAB's labeler does.
    expect(labelWindows(100, [16, 60])).toEqual([{ start: 58, end: 62 }]);
    expect(labelWindows(LENGTH, [])).toEqual([]);
    expect(probationLength(LENGTH)).toBe(150);
    expect(probationLength(100_000)).toBe(750);
  });
});

describe("scaled sigmoid", () => {
  it("is 2*sigmoid(5) - 1 at a window's left edge, 0 at its right edge, -1 from 3 widths past it", () => {
    expect(scaledSigmoid(-1)).toBeCloseTo(0.986614, 6);
    expect(scaledSigmoid(-0.5)).toBeCloseTo(0.848284, 6);
    expect(scaledSigmoid(0)).toBe(0);
    expect(scaledSigmoid(1)).toBeCloseTo(-0.986614, 6);
    expect(scaledSigmoid(3)).toBe(-1);
  });
});

describe("NAB standard-profile score", () => {
  it("gives a perfect detector (first row of every window) 100 and no alerts 0", () => {
    const perfect = scoreSeries(LENGTH, ONE, [450]);
    expect(perfect.raw).toBeCloseTo(1, 12);
    expect(normalisedScore(perfect.raw, 1)).toBeCloseTo(100, 10);
    const none = scoreSeries(LENGTH, ONE, []);
    expect(none.raw).toBe(-1);
    expect(none.windows[0].detection).toBeNull();
    expect(normalisedScore(none.raw, 1)).toBe(0);
  });

  it("charges 0.11 for a false alarm with no window before it", () => {
    const s = scoreSeries(LENGTH, ONE, [450, 200]);
    expect(s.falsePositives).toEqual([{ row: 200, score: -0.11 }]);
    expect(s.raw).toBeCloseTo(0.89, 12);
    // (0.89 - (-1)) / (1 - (-1)) = 94.5
    expect(normalisedScore(s.raw, 1)).toBeCloseTo(94.5, 10);
  });

  it("weights a false alarm after a window by the sigmoid of its distance, in window widths", () => {
    // Row 600: (600 - 550) / (101 - 1) = 0.5 widths past the window -> 0.11 * (2 / (1 + e^2.5) - 1) = -0.093311
    const s = scoreSeries(LENGTH, ONE, [450, 600]);
    expect(s.falsePositives[0].score).toBeCloseTo(-0.093311, 6);
    // Right after the window it costs almost nothing; far after it, the full 0.11.
    expect(scoreSeries(LENGTH, ONE, [551]).falsePositives[0].score).toBeCloseTo(0.11 * scaledSigmoid(0.01), 12);
    expect(scoreSeries(LENGTH, ONE, [900]).falsePositives[0].score).toBe(-0.11);
  });

  it("scores an early hit above a late one, and counts only the first hit in a window", () => {
    const early = scoreSeries(LENGTH, ONE, [460]).raw;
    const late = scoreSeries(LENGTH, ONE, [540]).raw;
    expect(early).toBeGreaterThan(late);
    expect(late).toBeGreaterThan(0);
    // At the anomaly itself (mid-window): position -(550 - 500 + 1) / 101 -> scaledSigmoid / scaledSigmoid(-1)
    expect(scoreSeries(LENGTH, ONE, [500]).raw).toBeCloseTo(scaledSigmoid(-51 / 101) / scaledSigmoid(-1), 12);
    const twice = scoreSeries(LENGTH, ONE, [460, 470]);
    expect(twice.raw).toBe(early);
    expect(twice.falsePositives).toEqual([]);
  });

  it("costs 1 per missed window and ignores alerts during the probation", () => {
    const two = labelWindows(LENGTH, [300, 700]);
    const s = scoreSeries(LENGTH, two, [275]);
    expect(s.raw).toBeCloseTo(0, 12); // +1 for [275, 325], -1 for [675, 725]
    expect(normalisedScore(s.raw, 2)).toBeCloseTo(50, 10);
    expect(scoreSeries(LENGTH, ONE, [100]).raw).toBe(-1);
  });
});

describe("every notification counts", () => {
  it("charges each of several alerts on one row outside the windows, and counts repeats inside a window", () => {
    const s = scoreSeries(LENGTH, ONE, [200, 200, 460, 460, 470]);
    expect(s.falsePositives.map((fp) => fp.row)).toEqual([200, 200]);
    expect(s.raw).toBeCloseTo(scoreSeries(LENGTH, ONE, [460]).raw - 0.22, 12);
    expect(s.windows[0]).toMatchObject({ detection: 460, detections: 3 });
  });
});
