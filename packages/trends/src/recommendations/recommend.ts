import { categoryWithin, type Recommendation } from "@trendgate/contracts";

// What to do about an account's active trends, given what the account has set up. Pure: the facts come in, the
// recommendations go out (recommendationsFor in ./index.ts reads them from the database).

/** Whether an outbound connector can act now: ready, set up but refused (needs_reauth, error), or not set up. */
export type Readiness = "ready" | "broken" | "missing";

export interface AccountSetup {
  workflow: Readiness;
  chat: Readiness;
  /** Each ads connection with the trend category its selection targets (null: no selection yet). */
  ads: { provider: string; readiness: Readiness; category: string | null }[];
  /** Active webhook subscriptions. */
  webhooks: number;
}

export interface TrendInput {
  id: string;
  name: string;
  category: string;
  severity: string;
  stage: string;
  velocity: number;
  anomalyScore: number;
  sentiment: number | null;
  /** Mentions in the assessed bucket. */
  current: number;
  /** The sources (connectors, or a pushed signal's `source`) that mentioned the topic in the last day. */
  sources: string[];
  /** Hours since the trend was detected. */
  hoursActive: number;
  /** What the account already did about the trend (absent: nothing). */
  handled?: Handled;
}

/** The account's own answers to a trend, which a recommendation must not contradict or repeat. */
export interface Handled {
  /** A mute holding the trend's events back now: no action is recommended while it holds. */
  muteId?: string;
  /** The team's answer on the trend's operator item: it needs no further alert. */
  team?: "acknowledged" | "snoozed" | "resolved";
  /** Ads providers whose targeting plan for a category covering the trend was applied since it was detected. */
  adsApplied?: string[];
}

/** At or below this average sentiment a trend is a complaint or a controversy: a team alert, never an ad. */
export const NEGATIVE_SENTIMENT = -0.3;

const STAGE_WEIGHT: Record<string, number> = { rising: 1, emerging: 0.9, peaking: 0.8, cooling: 0.5, dormant: 0.3 };

/**
 * How sure a recommendation is: the evidence (1 - e^(-score/10): 0.36 at the lowest alerting score 4.5, 0.63 at 10,
 * 0.86 at 20, still rising beyond), the stage (a rising trend is worth acting on, a cooling one less), volume (a trend
 * of a handful of mentions an hour is less certain than one of hundreds), agreement (a rise seen on one platform
 * only may be that platform's artefact, a bot wave or one viral post: x0.85; two sources x0.95; three or more x1)
 * and duration (a trend detected minutes ago has had no time to be contradicted: from x0.8, reaching x1 at 3 hours).
 */
export function confidenceOf(t: TrendInput): number {
  const evidence = 1 - Math.exp(-Math.max(0, t.anomalyScore) / 10);
  const volume = 0.6 + 0.4 * Math.min(1, Math.max(0, t.current) / 100);
  const agreement = t.sources.length >= 3 ? 1 : t.sources.length === 2 ? 0.95 : 0.85;
  const duration = 0.8 + 0.2 * Math.min(1, Math.max(0, t.hoursActive) / 3);
  return Math.round(evidence * (STAGE_WEIGHT[t.stage] ?? 0.5) * volume * agreement * duration * 100) / 100;
}

/** The evidence behind the confidence, in words, appended to each reason. */
function evidenceOf(t: TrendInput): string {
  const hours = t.hoursActive < 1 ? "detected under an hour ago" : `active ${Math.floor(t.hoursActive)} h`;
  const where = t.sources.length === 0 ? "no source in the last day" : t.sources.length === 1 ? `seen on ${t.sources[0]} only` : `seen on ${t.sources.length} sources (${t.sources.join(", ")})`;
  return `score ${t.anomalyScore.toFixed(1)}, ${hours}, ${where}`;
}

const SETUP_PATHS = {
  workflow: "POST /api/integrations/workflow/connect, then PUT …/workflow/selection",
  chat: "GET /api/integrations/chat/auth, then PUT …/chat/save-channel",
  ads: "connect an ads provider (GET /api/integrations/ads/providers) and PUT its selection with this trend_category",
} as const;

/**
 * Recommendations for the trends, most confident first. A connector action is recommended only where the account
 * can carry it out now; where it cannot, one `set_up_connector` per connector says what to connect (for the most
 * confident trend that needs it) or what to repair. Negative trends are never advertised into.
 */
export function recommend(trends: readonly TrendInput[], setup: AccountSetup): Recommendation[] {
  const out: Recommendation[] = [];
  const setupNeeded = new Map<"workflow" | "chat" | "ads", { base: Omit<Recommendation, "action" | "connector" | "reason">; reason: string }>();
  const needSetup = (connector: "workflow" | "chat" | "ads", base: Omit<Recommendation, "action" | "connector" | "reason">, readiness: Readiness, what: string) => {
    const prev = setupNeeded.get(connector);
    if (prev && prev.base.confidence >= base.confidence) return;
    const reason = readiness === "broken"
      ? `${what}, but the ${connector} connection needs attention (re-authorise it: GET …/${connector}/connection shows why)`
      : `${what}: set up the ${connector} connector (${SETUP_PATHS[connector]})`;
    setupNeeded.set(connector, { base, reason });
  };

  for (const t of trends) {
    const base = { trend_id: t.id, trend_name: t.name, category: t.category, confidence: confidenceOf(t) };
    const handled = t.handled ?? {};
    if (handled.muteId) {
      out.push({ ...base, action: "watch", connector: null, reason: `muted (${handled.muteId}): its alerts are held back, so no action is recommended while the mute holds` });
      continue;
    }
    const done: string[] = []; // what the account already did, said when nothing else is left to do
    const high = t.severity === "high" || t.severity === "critical";
    const negative = t.sentiment !== null && t.sentiment <= NEGATIVE_SENTIMENT;
    const growing = t.stage === "emerging" || t.stage === "rising";
    let acted = false;

    if (high && !negative) {
      const ads = setup.ads.filter((a) => a.category !== null && categoryWithin(t.category, a.category));
      const applied = ads.filter((a) => handled.adsApplied?.includes(a.provider));
      const ready = ads.find((a) => a.readiness === "ready" && !applied.includes(a));
      if (applied.length) done.push(`a targeting plan for it was applied on ${applied.map((a) => a.provider).join(", ")}`);
      if (ready) {
        out.push({ ...base, action: "target_ads_category", connector: "ads", reason: `${t.severity} trend in ${t.category}: preview the ${ready.provider} targeting plan for it, then apply under strict safety` });
        acted = true;
      } else if (!applied.length) {
        needSetup("ads", base, ads.length ? "broken" : "missing", `${t.severity} trend in ${t.category} with no ads connection targeting it`);
      }
    }
    if (growing && !negative) {
      if (setup.workflow === "ready") {
        out.push({ ...base, action: "push_to_workflow", connector: "workflow", reason: `${t.stage} at ${Math.round(t.velocity)} mentions/h above baseline: start the content workflow while it grows` });
        acted = true;
      } else needSetup("workflow", base, setup.workflow, `${t.stage} trend ${t.name} could start a content workflow`);
    }
    if (t.severity === "critical" || (negative && (high || t.severity === "medium"))) {
      const why = negative
        ? `negative conversation (sentiment ${t.sentiment!.toFixed(2)}) at ${t.severity} severity: a reputation risk for the team to answer, not to advertise into`
        : "critical severity: tell the operator queue now";
      if (handled.team) {
        done.push(`the team ${handled.team} its operator item`);
      } else if (setup.chat === "ready") {
        out.push({ ...base, action: "alert_team", connector: "chat", reason: why });
        acted = true;
      } else if (setup.webhooks > 0) {
        out.push({ ...base, action: "alert_team", connector: "webhooks", reason: `${why} (your webhook subscriptions receive it)` });
        acted = true;
      } else needSetup("chat", base, setup.chat, negative ? `negative ${t.severity} trend ${t.name}` : `critical trend ${t.name}`);
    }
    if (!acted) {
      const why = done.length
        ? `${done.join("; ")}: nothing more to do unless it changes`
        : negative
        ? `${t.severity}, sentiment ${t.sentiment!.toFixed(2)}: keep ads away from it and watch how the conversation turns`
        : `${t.severity} and ${t.stage}: wait for a severity change before spending`;
      out.push({ ...base, action: "watch", connector: null, reason: why });
    }
  }
  for (const [connector, s] of setupNeeded) out.push({ ...s.base, action: "set_up_connector", connector, reason: s.reason });
  const evidence = new Map(trends.map((t) => [t.id, evidenceOf(t)]));
  for (const r of out) r.reason = `${r.reason} [${evidence.get(r.trend_id)}]`;
  return out.sort((a, b) => b.confidence - a.confidence || a.trend_id.localeCompare(b.trend_id));
}
