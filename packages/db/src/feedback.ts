import { evidenceBarFor, type FeedbackVerdict } from "@trendgate/contracts";
import type { Db, Tx } from "./client.ts";
import { newId } from "./ids.ts";

export type FeedbackRow = Awaited<ReturnType<Db["trendFeedback"]["findUniqueOrThrow"]>>;

/** The trend a verdict judges: its current detection. */
export interface JudgedTrend {
  id: string;
  accountId: string;
  topicId: string;
  detectedAt: Date;
}

/**
 * Recomputes a topic's evidence bar from its feedback (each detection counted once, by its latest verdict) and
 * stores it where the detection pass reads it. Returns the bar.
 */
async function refreshEvidenceBar(tx: Tx, topicId: string): Promise<number> {
  // Concurrent verdicts on one topic: the second waits here, then counts the first's row (committed by then).
  await tx.$executeRaw`SELECT 1 FROM topics WHERE id = ${topicId} FOR UPDATE`;
  const [{ net }] = await tx.$queryRaw<{ net: number }[]>`
    WITH latest AS (
      SELECT DISTINCT ON (detected_at) verdict FROM trend_feedback WHERE topic_id = ${topicId}
       ORDER BY detected_at, created_at DESC, id DESC
    )
    SELECT (count(*) FILTER (WHERE verdict = 'not_a_trend') - count(*) FILTER (WHERE verdict = 'useful'))::int AS net FROM latest`;
  const bar = evidenceBarFor(net);
  await tx.topic.update({ where: { id: topicId }, data: { evidenceBar: bar } });
  return bar;
}

/**
 * Records `actor`'s verdict on the trend's current detection (replacing the actor's earlier verdict on it) and
 * updates the topic's evidence bar, in one transaction (the caller's when given).
 */
export async function recordFeedback(db: Db | Tx, t: JudgedTrend, f: { verdict: FeedbackVerdict; actor: string; note?: string | null }) {
  const run = async (tx: Tx) => {
    const feedback = await tx.trendFeedback.upsert({
      where: { trendId_detectedAt_actor: { trendId: t.id, detectedAt: t.detectedAt, actor: f.actor } },
      create: { id: newId("fb"), accountId: t.accountId, trendId: t.id, topicId: t.topicId, detectedAt: t.detectedAt, verdict: f.verdict, actor: f.actor, note: f.note ?? null },
      update: { verdict: f.verdict, note: f.note ?? null, createdAt: new Date() },
    });
    return { feedback, evidenceBar: await refreshEvidenceBar(tx, t.topicId) };
  };
  return "$transaction" in db ? db.$transaction(run) : run(db);
}

/** A trend's feedback, newest first, with its topic's evidence bar. */
export async function listFeedback(db: Db, t: Pick<JudgedTrend, "id" | "accountId" | "topicId">) {
  const [data, evidenceBar] = await Promise.all([
    db.trendFeedback.findMany({ where: { accountId: t.accountId, trendId: t.id }, orderBy: { id: "desc" }, take: 200 }),
    evidenceBarOf(db, t.topicId),
  ]);
  return { data, evidenceBar };
}

/** Removes one verdict (a reversal) and lowers the bar accordingly; null when there was no such feedback. */
export async function deleteFeedback(db: Db, accountId: string, trendId: string, id: string): Promise<{ evidenceBar: number } | null> {
  return db.$transaction(async (tx) => {
    const row = await tx.trendFeedback.findFirst({ where: { id, accountId, trendId }, select: { topicId: true } });
    if (!row || !(await tx.trendFeedback.deleteMany({ where: { id } })).count) return null;
    return { evidenceBar: await refreshEvidenceBar(tx, row.topicId) };
  });
}

/** A topic's evidence bar (1 for a topic nobody judged). */
export async function evidenceBarOf(db: Db, topicId: string): Promise<number> {
  return (await db.topic.findUnique({ where: { id: topicId }, select: { evidenceBar: true } }))?.evidenceBar ?? 1;
}
