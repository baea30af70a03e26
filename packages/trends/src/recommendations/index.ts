import { AdsSelectionBody, type Recommendation } from "@trendgate/contracts";
import { accountSetupRows, activeTrendsByVelocity, sourcesByTopic, type Db } from "@trendgate/db";
import { recommend, type AccountSetup, type Readiness } from "./recommend.ts";

export { confidenceOf, NEGATIVE_SENTIMENT, recommend, type AccountSetup, type Readiness, type TrendInput } from "./recommend.ts";

/** Trends considered, fastest first. */
const TRENDS = 50;
/** Sources that mentioned a trend's topic this recently count as agreeing on it. */
const SOURCES_WINDOW_MS = 24 * 3600_000;

const readinessOf = (status: string, selected: boolean): Readiness => (status !== "connected" ? "broken" : selected ? "ready" : "missing");

/** The account's active trends and outbound setup, read once, then recommend(). */
export async function recommendationsFor(db: Db, accountId: string): Promise<Recommendation[]> {
  const [trends, rows] = await Promise.all([activeTrendsByVelocity(db, accountId, TRENDS), accountSetupRows(db, accountId)]);
  const now = Date.now();
  const sources = await sourcesByTopic(db, accountId, trends.map((t) => t.name), new Date(now - SOURCES_WINDOW_MS));
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
    sources: sources.get(t.name) ?? [], hoursActive: (now - t.detectedAt.getTime()) / 3600_000,
  })), setup);
}
