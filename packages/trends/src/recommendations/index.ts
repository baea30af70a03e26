import { AdsSelectionBody, type Recommendation } from "@trendgate/contracts";
import { accountSetupRows, activeTrendsByVelocity, appliedTargetingSince, sourcesByTopic, teamAnswersByTrend, unendedMutes, type Db } from "@trendgate/db";
import { categoryWithin } from "@trendgate/contracts";
import { mutesHolding } from "../events/mutes.ts";
import { recommend, type AccountSetup, type Handled, type Readiness } from "./recommend.ts";

export { confidenceOf, NEGATIVE_SENTIMENT, recommend, type AccountSetup, type Handled, type Readiness, type TrendInput } from "./recommend.ts";

/** Trends considered, fastest first. */
const TRENDS = 50;
/** Sources that mentioned a trend's topic this recently count as agreeing on it. */
const SOURCES_WINDOW_MS = 24 * 3600_000;

const readinessOf = (status: string, selected: boolean): Readiness => (status !== "connected" ? "broken" : selected ? "ready" : "missing");

/** The account's active trends and outbound setup, read once, then recommend(). */
export async function recommendationsFor(db: Db, accountId: string): Promise<Recommendation[]> {
  const [trends, rows] = await Promise.all([activeTrendsByVelocity(db, accountId, TRENDS), accountSetupRows(db, accountId)]);
  const now = Date.now();
  const since = new Date(Math.min(now, ...trends.map((t) => t.detectedAt.getTime())));
  const [sources, mutes, team, applied] = await Promise.all([
    sourcesByTopic(db, accountId, trends.map((t) => t.name), new Date(now - SOURCES_WINDOW_MS)),
    unendedMutes(db, accountId, new Date(now)),
    teamAnswersByTrend(db, accountId, trends.map((t) => t.id)),
    appliedTargetingSince(db, accountId, since),
  ]);
  // What the account already did about each trend: a recommendation neither contradicts a mute nor repeats an answer.
  const handledOf = (t: (typeof trends)[number]): Handled => ({
    muteId: mutesHolding(mutes, { trend_name: t.name, category: t.category }, new Date(now))[0]?.id,
    team: team.get(t.id) as Handled["team"],
    adsApplied: applied.filter((a) => a.appliedAt >= t.detectedAt && categoryWithin(t.category, a.category)).map((a) => a.provider),
  });
  const best = (kind: string, selected: (s: Record<string, unknown>) => boolean): Readiness => {
    const r = rows.connections.filter((c) => c.kind === kind).map((c) => readinessOf(c.status, selected(c.selection)));
    return r.includes("ready") ? "ready" : r.includes("broken") ? "broken" : "missing";
  };
  const setup: AccountSetup = {
    workflow: best("workflow", (s) => typeof s.workflow_id === "string" || typeof s.push_url === "string"),
    chat: best("chat", (s) => typeof s.channel_id === "string"),
    ads: rows.connections.filter((c) => c.kind === "ads").map((c) => {
      const sel = AdsSelectionBody.safeParse(c.selection);
      return { provider: c.provider, category: sel.success ? sel.data.trend_category : null, readiness: c.status === "connected" ? "ready" : "broken" };
    }),
    webhooks: rows.activeWebhooks,
  };
  return recommend(trends.map((t) => ({
    id: t.id, name: t.name, category: t.category, severity: t.severity, stage: t.stage, velocity: t.velocity,
    anomalyScore: t.anomalyScore, sentiment: t.sentiment, current: t.current,
    sources: sources.get(t.name) ?? [], hoursActive: (now - t.detectedAt.getTime()) / 3600_000, handled: handledOf(t),
  })), setup);
}
