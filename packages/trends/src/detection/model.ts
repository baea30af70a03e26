import type { Resolved } from "./config.ts";
import { dailyShape, isWeekendHour } from "./seasonality.ts";
import { MAD_TO_SIGMA, mod, quantileOf, SlidingMedian } from "./stats.ts";

// The statistics of one topic: fitted once on the history before a bucket, then used to score that bucket (and the
// few before it, for stage and acceleration) at every time scale.

/** The p-quantile of the largest of n standard normal draws: Phi^-1(p^(1/n)) (Abramowitz & Stegun 26.2.23, error < 5e-4). */
export function quantileMaxOfNormals(n: number, p: number): number {
  const q = 1 - p ** (1 / n); // upper tail probability
  const t = Math.sqrt(-2 * Math.log(q));
  return t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t ** 3);
}

/**
 * Which day's largest surprise sets a topic's usual spike: the second largest of t days (the quantile that picks it),
 * so a spike on two or more days of the history is usual for the topic (a small topic spiking every day or three), while
 * one past burst is not. With fewer than three days, the median day.
 */
const usualDayQuantile = (t: number) => (t >= 3 ? (t - 2) / (t - 1) : 0.5);
/**
 * A topic spikes "repeatedly" when its usual spike is at least this many times its Poisson noise and at least
 * FREQUENT_SPIKE_DAYS days of its history spiked to half the usual spike or more.
 */
const FREQUENT_SPIKE_DISPERSION = 2;
const FREQUENT_SPIKE_DAYS = 2;
/** The tail is learnt on history older than this, so an ongoing trend does not teach the model that it is usual. */
const TAIL_EXCLUDE_HOURS = 24;
/** Windows sampled per scale when fitting (two weeks of hourly buckets). */
const MAX_WINDOWS = 336;
/** A longer window is scored only while its last bucket is at least this many standard deviations above the level before the window. */
const LONG_SCALE_GATE = 1;
/**
 * Relative error of the model itself (daily shape, growth): counts are never exactly Poisson around it, and at high
 * volume this, not the Poisson noise, is what a misfit of a few percent must be compared with.
 */
const MODEL_ERROR = 0.05;
/**
 * The model's relative error until its daily shape is known (every hour of day seen on two days): a topic a day or
 * two old rises through its usual evening peak for the first time, which its level cannot yet tell from news.
 */
const YOUNG_MODEL_ERROR = 0.15;
/**
 * The plain z-score floor: a bucket FLOOR_Z standard deviations above the mean of the week before it (FLOOR_HOURS),
 * and at least FLOOR_BEYOND times the topic's usual daily peak (the median of its daily maxima over that week),
 * scores at least `low` (score = FLOOR_SCALE x z) whatever the model makes of it. The seasonal model excuses what it
 * has learnt to expect (a daily peak, a topic's usual spikes); on real social volume it excused spikes people label
 * as news, and lost to a plain z-score. The floor needs a day of history (FLOOR_MIN_HOURS) where the model's
 * usual-spike tail needs two: a young topic is alerted on from its second day. Four times, not two: at twice, a
 * topic spiking 3-5x on half its days fired on its ordinary spikes (real and synthetic volume alike).
 */
export const FLOOR_Z = 6;
export const FLOOR_BEYOND = 4;
const FLOOR_SCALE = 4.5 / FLOOR_Z;

/**
 * Relative variance that the level's own estimation error adds to a window of m buckets: the level is a median of
 * `recent` buckets (variance ~ pi/2 x one bucket's / recent) and is multiplied by m in the window's expectation.
 */
const levelError = (m: number, recent: number) => (Math.PI / 2) * (m / recent);

interface ScaleFit {
  m: number;
  /** Index into Model.levels of the level this scale compares with, and its length in buckets. */
  levelOf: number;
  levelBuckets: number;
  /** Typical ratio of a window's (deseasonalized) mean to the level just before it, at least 1. */
  growth: number;
  /** Noise relative to Poisson at this scale: max(1, robust core, usual-spike tail). */
  dispersion: number;
}

export interface Model {
  from: number;
  /**
   * History positions dropped before `from` by compactModel (0 for a fitted model): a compact model keeps only the
   * last buckets that scoring reads, so `i + cut` is a position's index in the fitted one.
   */
  cut: number;
  /** A compact model's plain z-score floor per kept position: n, mean and sd of its history (floorZ). */
  floorAt?: Float64Array;
  /** levels[x].at(i): median of the deseasonalized present buckets in the level window x before bucket from + i. */
  levels: Levels[];
  season: Float64Array;
  factorError: Float64Array;
  scales: ScaleFit[];
  /** Prefix sums (index i = sum over [from, from + i)) of present y, season and counts. */
  py: Float64Array;
  ps: Float64Array;
  /** Per bucket: count + 1 minus the one-bucket expectation (-Infinity where missing), for the lone-spike rule. */
  excess: Float64Array;
  /** The one-bucket scale's level and growth, which that expectation uses. */
  one: { levelOf: number; growth: number };
  /** Relative error of the model itself: MODEL_ERROR, or YOUNG_MODEL_ERROR before the daily shape is known. */
  modelError: number;
  /** Prefix sums of present y squared and of present buckets, for the plain z-score floor. */
  pq: Float64Array;
  pn: Float64Array;
  /** The floor's history (FLOOR_HOURS) and the least of it that gives a z-score (FLOOR_MIN_HOURS), in buckets. */
  floorBuckets: number;
  floorMinBuckets: number;
  dayBuckets: number;
}

/**
 * Fits the history y[k - historyBuckets .. k) of bucket k. y holds count + 1 per bucket (so silent buckets need no
 * special case), NaN where data is missing; y[k] may already hold a partial bucket. Returns undefined when the
 * history has fewer than minHistoryBuckets present buckets (such a bucket is not scored).
 */
export function fitModel(y: Float64Array, firstBucket: number, k: number, cfg: Resolved): Model | undefined {
  const from = Math.max(0, k - cfg.historyBuckets);
  let present = 0;
  for (let j = from; j < k; j++) if (!Number.isNaN(y[j])) present++;
  if (present < cfg.minHistoryBuckets) return undefined;

  const len = k - from + 1;
  const shape = dailyShape(y, from, k, firstBucket, cfg.bucketsPerHour);
  const season = new Float64Array(len).fill(1);
  const factorError = new Float64Array(len);
  if (shape) {
    for (let i = 0; i < len; i++) {
      const hour = Math.floor((firstBucket + from + i) / cfg.bucketsPerHour);
      const phase = mod(hour, 24);
      season[i] = shape.factors[phase] * (isWeekendHour(hour) ? shape.weekend : 1);
      // A factor estimated from n days carries its own error (variance ~ pi/2 / n of the noise, for a median).
      factorError[i] = shape.samples[phase] ? Math.PI / 2 / shape.samples[phase] : 0;
    }
  }

  const d = new Float64Array(len);
  for (let i = 0; i < len; i++) d[i] = y[from + i] / season[i];
  const lengths: number[] = [];
  const levels: Levels[] = [];
  for (const { level: r } of cfg.scales) {
    if (lengths.includes(r)) continue;
    lengths.push(r);
    levels.push(new Levels(d, r, cfg.bucketsPerHour > 1 ? hourlyLevels(d, firstBucket + from, cfg.bucketsPerHour, r) : r <= EAGER_LEVEL ? rollingMedian(d, r) : undefined));
  }
  const py = new Float64Array(len + 1);
  const ps = new Float64Array(len + 1);
  const pd = new Float64Array(len + 1);
  const pn = new Float64Array(len + 1);
  const pq = new Float64Array(len + 1);
  for (let i = 0; i < len; i++) {
    const ok = !Number.isNaN(y[from + i]);
    py[i + 1] = py[i] + (ok ? y[from + i] : 0);
    pq[i + 1] = pq[i] + (ok ? y[from + i] ** 2 : 0);
    ps[i + 1] = ps[i] + (ok ? season[i] : 0);
    pd[i + 1] = pd[i] + (ok ? d[i] : 0);
    pn[i + 1] = pn[i] + (ok ? 1 : 0);
  }

  const tailEnd = len - 1 - Math.round((TAIL_EXCLUDE_HOURS * 3600) / cfg.bucketSeconds);
  const learnsTail = tailEnd >= cfg.tailMinBuckets;
  const ratios = new Float64Array(len);
  const residuals = new Float64Array(len);
  const tail = new Float64Array(len);
  const starts = new Int32Array(len);
  const scales: ScaleFit[] = [];
  let excess: Float64Array | undefined;
  let one: Model["one"] | undefined;
  for (const { m, level: r } of cfg.scales) {
    const levelOf = lengths.indexOf(r);
    const lv = levels[levelOf];
    if (m > 1 && !excess) continue;
    // Windows [w, w + m) wholly inside the history, each with the level just before it; overlapping by half at
    // most (neighbours that share most of their buckets add little but cost a sort each).
    // With short buckets a week is thousands of them: at most MAX_WINDOWS windows keep a fit's cost independent of the width.
    // Windows start once their level has half its length of history behind it (or in the second half of a short
    // history): a level of the first few buckets alone is a poor one, and the noise it adds is not the topic's.
    let n = 0;
    const stride = Math.max(Math.ceil(m / 2), Math.ceil(len / MAX_WINDOWS));
    const first = Math.max(1, Math.min(Math.ceil(r / 2), Math.floor((len - 1 - m) / 2)));
    for (let w = first; w + m <= len - 1; w += stride) {
      const present = pn[w + m] - pn[w];
      const level = lv.at(w);
      if (!present || Number.isNaN(level)) continue;
      starts[n] = w;
      ratios[n++] = (pd[w + m] - pd[w]) / (present * level);
    }
    if (n < 3) continue;
    // A steady drift (even exponential) gives a constant ratio; past bursts are a minority the median ignores.
    // Declines are not extrapolated, so a topic that stops falling does not look like a burst.
    const growth = Math.max(1, quantileOf(ratios, n, 0.5));
    const relative = 1 + levelError(m, r);
    // Each day's largest surprise (days of the tail history; windows counted per day for the normal reference).
    let t = 0;
    let day = NaN;
    let perDay = 0;
    for (let x = 0; x < n; x++) {
      const w = starts[x];
      const expected = growth * lv.at(w) * (ps[w + m] - ps[w]);
      const actual = py[w + m] - py[w] - (m > 1 ? loneSpike(excess!, w, w + m) : 0);
      residuals[x] = (actual - expected) / Math.sqrt(expected * relative);
      if (!learnsTail || w + m > tailEnd) continue;
      const d = Math.floor(((firstBucket + from + w + m - 1) * cfg.bucketSeconds) / 86_400);
      if (d !== day) { tail[t++] = residuals[x]; day = d; perDay = 0; }
      tail[t - 1] = Math.max(tail[t - 1], residuals[x]);
      perDay++;
    }
    const windowsPerDay = Math.max(1, Math.round(86_400 / (cfg.bucketSeconds * stride)));
    // Robust core: past bursts and outages do not widen it. Tail: a topic whose normal includes spikes (a near-daily
    // one) scores its usual spike near the normal tail, so only a spike unusual for this topic fires.
    const center = quantileOf(residuals, n, 0.5);
    for (let x = 0; x < n; x++) ratios[x] = Math.abs(residuals[x] - center); // ratios reused as scratch
    const core = MAD_TO_SIGMA * quantileOf(ratios, n, 0.5);
    // "Usual spikes": the largest surprise of the second-largest day (usualDayQuantile), against what the same
    // quantile of that many normal surprises would be. A topic spiking on two days or more gets a wide tail; a single
    // past burst (one day) does not.
    const q = usualDayQuantile(t);
    const usualDay = t >= 2 ? quantileOf(tail, t, q) : 0;
    let usual = t >= 2 ? usualDay / quantileMaxOfNormals(windowsPerDay, q) : 0;
    // A topic that spikes repeatedly, at sizes that vary, reaches its largest past spike again without news: then the
    // largest day, against the largest normal surprise of the whole history, sets the tail (the second-largest alone
    // let every spike above the smaller of two past ones alert).
    if (usual >= FREQUENT_SPIKE_DISPERSION) {
      let spikeDays = 0;
      let largest = -Infinity;
      for (let x = 0; x < t; x++) {
        if (tail[x] >= usualDay / 2) spikeDays++;
        largest = Math.max(largest, tail[x]);
      }
      if (spikeDays >= FREQUENT_SPIKE_DAYS) usual = Math.max(usual, largest / quantileMaxOfNormals(windowsPerDay * t, 0.5));
    }
    scales.push({ m, levelOf, levelBuckets: r, growth, dispersion: Math.max(1, core, usual) });
    if (m === 1) {
      // The longer windows are there for sustained shifts: a single spike (the bucket scale's business) must neither
      // trigger them nor, in a spiky topic, widen their tail so much that a real ramp or plateau cannot show. So a
      // window's largest bucket counts no more above its expectation than the window's second largest does
      // (loneSpike); a bump of several strong hours counts whole, which a cap per bucket would not allow.
      one = { levelOf, growth };
      excess = new Float64Array(len);
      for (let i = 0; i < len; i++) excess[i] = oneBucketExcess(levels, season, one, y[from + i], i);
    }
  }
  if (!scales.length || scales[0].m !== 1) return undefined;
  const shapeKnown = !cfg.bucketsPerHour || (shape !== undefined && Math.min(...shape.samples) >= 2);
  return {
    from, cut: 0, levels, season, factorError, scales, py, ps, excess: excess!, one: one!, modelError: shapeKnown ? MODEL_ERROR : YOUNG_MODEL_ERROR,
    pq, pn, floorBuckets: cfg.floorBuckets, floorMinBuckets: cfg.floorMinBuckets, dayBuckets: cfg.dayBuckets,
  };
}

/**
 * How many of a model's last positions scoring reads: the buckets an assessment scores (the assessed one, and up to
 * coolingBuckets before the last closed one, for its stage) and the longest window before each.
 */
export const scoredTail = (cfg: Resolved) => cfg.coolingBuckets + Math.max(...cfg.scales.map((s) => s.m)) + 2;

/**
 * The model cut down to its last `keep` positions, with every value scoring reads there computed now (levels, the
 * floor's statistics): a few KB where the fitted model holds the whole history (about 21 KB at the default eight
 * days). Scores exactly as the fitted model does for the buckets of those positions, given the same history in y
 * (the floor's usual peak is still read from it when needed).
 */
export function compactModel(model: Model, keep: number): Model {
  const len = model.season.length;
  const off = len - keep;
  if (off <= 0 || model.floorAt) return model;
  const floorAt = new Float64Array(3 * keep);
  for (let x = 0; x < keep; x++) {
    const f = floorBasis(model, off + x);
    floorAt[3 * x] = f.n;
    floorAt[3 * x + 1] = f.mean;
    floorAt[3 * x + 2] = f.sd;
  }
  return {
    ...model,
    from: model.from + off,
    cut: model.cut + off,
    floorAt,
    levels: model.levels.map((lv) => lv.tail(off)),
    season: model.season.slice(off),
    factorError: model.factorError.slice(off),
    py: model.py.slice(off),
    ps: model.ps.slice(off),
    excess: model.excess.slice(off),
    pq: new Float64Array(0),
    pn: new Float64Array(0),
  };
}

/** v (count + 1 of bucket i) minus its one-bucket expectation; -Infinity when missing or without a level. */
function oneBucketExcess(levels: Levels[], season: Float64Array, one: Model["one"], v: number, i: number): number {
  const level = levels[one.levelOf].at(i);
  return Number.isNaN(v) || Number.isNaN(level) ? -Infinity : v - one.growth * level * season[i];
}

/**
 * How much the largest excess among buckets [a, b) stands above the second largest (or above 0): what a lone spike
 * adds to the window's sum, taken out of it. `last`, when given, replaces bucket b - 1's excess (a bucket in progress).
 */
function loneSpike(excess: Float64Array, a: number, b: number, last?: number): number {
  let first = -Infinity;
  let second = -Infinity;
  for (let t = a; t < b; t++) {
    const e = t === b - 1 && last !== undefined ? last : excess[t];
    if (e > first) [first, second] = [e, first];
    else if (e > second) second = e;
  }
  return Number.isFinite(first) ? Math.max(0, first - Math.max(second, 0)) : 0;
}

/**
 * Levels for buckets shorter than an hour: the rolling median of hourly means (r buckets = r / bucketsPerHour hours)
 * before each bucket's hour. Same statistic at a fraction of the cost: a two-day level of 5-minute buckets would
 * otherwise keep a sorted window of 576 values per bucket.
 */
function hourlyLevels(d: Float64Array, firstBucket: number, bucketsPerHour: number, r: number): Float64Array {
  const hourOf = (i: number) => Math.floor((firstBucket + i) / bucketsPerHour);
  const h0 = hourOf(0);
  const hours = hourOf(d.length - 1) - h0 + 1;
  const sum = new Float64Array(hours);
  const n = new Float64Array(hours);
  for (let i = 0; i < d.length; i++) {
    if (Number.isNaN(d[i])) continue;
    sum[hourOf(i) - h0] += d[i];
    n[hourOf(i) - h0]++;
  }
  const means = sum.map((v, h) => (n[h] ? v / n[h] : NaN));
  const rolled = rollingMedian(means, Math.max(1, Math.round(r / bucketsPerHour)));
  // rolled[h] covers hours before h; a bucket in its hour's first part would otherwise see no level at all.
  return Float64Array.from(d, (_, i) => rolled[hourOf(i) - h0]);
}

/** Level windows up to this many buckets are computed for every position at once (sliding); longer ones on demand. */
const EAGER_LEVEL = 12;

/**
 * Medians of the present d in the r positions before each position. A long level (a day, two) is asked for only at
 * window starts and at the last buckets, so it is computed on demand (quickselect) instead of sliding over all.
 */
class Levels {
  private readonly values: Float64Array;
  private readonly scratch: Float64Array;

  constructor(private readonly d: Float64Array, private readonly r: number, all?: Float64Array) {
    this.values = all ?? new Float64Array(d.length).fill(-1); // -1: not computed yet (levels are >= 0 or NaN)
    this.scratch = all ? this.values : new Float64Array(r);
  }

  /** The same levels from position `off` on, every one computed now (a compact model's: nothing left to read d for). */
  tail(off: number): Levels {
    for (let i = off; i < this.d.length; i++) this.at(i);
    // No history is kept: every kept position's level is computed (a NaN would show a position read beyond them).
    return new Levels(new Float64Array(0), this.r, this.values.slice(off));
  }

  at(i: number): number {
    const v = this.values[i];
    if (v !== -1) return v;
    let n = 0;
    for (let j = Math.max(0, i - this.r); j < i; j++) if (!Number.isNaN(this.d[j])) this.scratch[n++] = this.d[j];
    return (this.values[i] = n ? quantileOf(this.scratch, n, 0.5) : NaN);
  }
}

/** rolled[i]: median of the present values of d in the r positions before i (NaN when none). */
function rollingMedian(d: Float64Array, r: number): Float64Array {
  const rolled = new Float64Array(d.length).fill(NaN);
  const window = new SlidingMedian();
  for (let i = 1; i < d.length; i++) {
    if (!Number.isNaN(d[i - 1])) window.add(d[i - 1]);
    const old = i - 1 - r;
    if (old >= 0 && !Number.isNaN(d[old])) window.remove(d[old]);
    if (window.size) rolled[i] = window.median();
  }
  return rolled;
}

export interface BucketScore {
  /** Expected count of the whole bucket (the one-bucket scale). */
  baseline: number;
  /** Highest z-score over the time scales (the bucket alone, the last 3 h, the last 6 h). */
  score: number;
  /** Mentions per (whole) bucket above expected, averaged over the window of the scale with that score. */
  excess: number;
}

/**
 * Scores bucket j (absolute index into y) against the model. `observed` is the fraction of bucket j that has elapsed
 * (1 for a closed bucket). A bucket in progress is scored as the closed bucket it becomes if the rest of it arrives
 * one standard deviation short of its expectation: what arrived so far must already make the whole bucket anomalous.
 * Mentions do not arrive evenly within a bucket (real five-minute counts vary 2-4 times, on spiky topics 30-70 times,
 * more than a steady rate would give), so an early clump judged against the elapsed fraction alone alerts on hours
 * that end normal; judged against the whole bucket's noise, which the topic's own history measured, it alerts only
 * when the closed bucket would confirm it unless the rest of the bucket falls well below normal.
 */
export function scoreBucket(model: Model, y: Float64Array, j: number, observed = 1): BucketScore | undefined {
  const i = j - model.from;
  if (i + model.cut < 1 || Number.isNaN(y[j])) return undefined;
  const one = model.scales[0];
  const expectedY = one.growth * model.levels[one.levelOf].at(i) * model.season[i]; // count + 1 expected of the whole bucket
  const baseline = Math.max(0, expectedY - 1);
  // The rest of a bucket in progress counted one standard deviation short of its expectation: after an early clump
  // the rest of an hour tends to run low (arrivals bunch, they do not add), so the alert must hold even then.
  const rest = observed < 1 && !Number.isNaN(expectedY) ? (1 - observed) * expectedY : 0;
  const v = y[j] + Math.max(0, rest - one.dispersion * Math.sqrt(rest));
  const lastExcess = oneBucketExcess(model.levels, model.season, model.one, v, i); // the longer windows' lone-spike rule
  let score = -Infinity;
  let excess = 0;
  for (const s of model.scales) {
    const w = i - s.m + 1;
    const levelBefore = w + model.cut < 1 ? NaN : model.levels[s.levelOf].at(w);
    if (Number.isNaN(levelBefore)) continue;
    const level = s.growth * levelBefore;
    const lastExpected = level * model.season[i];
    const d2 = s.dispersion ** 2;
    const estimation = 1 + model.factorError[i];
    const expected = level * (model.ps[i] - model.ps[w]) + lastExpected;
    const actual = s.m === 1 ? v : model.py[i] - model.py[w] + v - loneSpike(model.excess, w, i + 1, lastExcess);
    // A longer window counts only while its last bucket still runs above the level before the window (by a standard
    // deviation), and by at least half the window's own excess per bucket: once a burst is over, the sum that still
    // contains it must not keep the trend alive.
    if (s.m > 1) {
      const lastNoise = d2 * lastExpected * (estimation + levelError(1, s.levelBuckets)) + (model.modelError * lastExpected) ** 2;
      if ((v - lastExpected) / Math.sqrt(lastNoise) < LONG_SCALE_GATE || v - lastExpected < (actual - expected) / s.m / 2) continue;
    }
    const noise = d2 * expected * (estimation + levelError(s.m, s.levelBuckets)) + (model.modelError * expected) ** 2;
    const z = (actual - expected) / Math.sqrt(noise);
    if (z > score) [score, excess] = [z, (actual - expected) / s.m];
  }
  // The plain z-score as a floor: what has arrived so far (no projection: counts only grow, so a bucket in progress
  // already this far out is at least as far out closed) against the mean and standard deviation of the history.
  const floor = floorZ(model, y, i, y[j], score / FLOOR_SCALE);
  if (floor) [score, excess] = [FLOOR_SCALE * floor.z, floor.excess];
  return Number.isFinite(score) ? { baseline, score, excess } : undefined;
}

/**
 * The plain z-score of v (count + 1 of bucket i of the model) against the mean and standard deviation of the
 * floorBuckets present buckets before it, when it exceeds `above` and v is FLOOR_BEYOND times the usual daily peak;
 * undefined otherwise, with fewer than floorMinBuckets of them, or no spread.
 */
function floorZ(model: Model, y: Float64Array, i: number, v: number, above: number): { z: number; excess: number } | undefined {
  const f = model.floorAt ? { n: model.floorAt[3 * i], mean: model.floorAt[3 * i + 1], sd: model.floorAt[3 * i + 2] } : floorBasis(model, i);
  if (f.n < model.floorMinBuckets) return undefined;
  const z = (v - f.mean) / f.sd;
  // Only a z that would raise the score is worth the week's scan for its daily maxima (most buckets stop here).
  if (!(f.sd > 0) || !(z > above)) return undefined;
  if (v < FLOOR_BEYOND * usualPeak(model, y, i)) return undefined;
  return { z, excess: v - f.mean };
}

/** The floor's history of position i: how many buckets are present in it, their mean and standard deviation. */
function floorBasis(model: Model, i: number): { n: number; mean: number; sd: number } {
  const a = Math.max(0, i - model.floorBuckets);
  const n = model.pn[i] - model.pn[a];
  const mean = (model.py[i] - model.py[a]) / n;
  return { n, mean, sd: Math.sqrt(Math.max(0, (model.pq[i] - model.pq[a]) / n - mean * mean)) };
}

/**
 * The topic's usual spike before position i: the median of its daily maxima over the floor's history, read from y
 * (positions counted as in the fitted model: a compact one's `cut` added back).
 */
function usualPeak(model: Model, y: Float64Array, i: number): number {
  const at = i + model.cut;
  const from = model.from - model.cut;
  const a = Math.max(0, at - model.floorBuckets);
  const maxima: number[] = [];
  for (let end = at; end - model.dayBuckets >= a; end -= model.dayBuckets) {
    let m = -Infinity;
    for (let k = end - model.dayBuckets; k < end; k++) if (y[from + k] > m) m = y[from + k];
    if (m > -Infinity) maxima.push(m);
  }
  maxima.sort((x, y) => x - y);
  return maxima[(maxima.length - 1) >> 1];
}
