import { z } from "zod";
import { CreateFeedbackBody, FeedbackList, FeedbackParams, FeedbackResult, Id, type Feedback, type FeedbackVerdict } from "@trendgate/contracts";
import { deleteFeedback, findAccountTrend, listFeedback, recordFeedback, type FeedbackRow } from "@trendgate/db";
import { credentialActor } from "@trendgate/operator";
import { notFound } from "../http/api-error.ts";
import { defineRoute } from "../http/route.ts";

// Feedback on a trend's detection (see docs/api.md › Feedback). The detector reads it per topic as an evidence bar.

const BASE = "/api/trends/{trend_id}/feedback";
const TAG = "Trends";

export const toFeedback = (r: FeedbackRow): Feedback => ({
  id: r.id, trend_id: r.trendId, detected_at: r.detectedAt.toISOString(), verdict: r.verdict as FeedbackVerdict, note: r.note,
  actor: r.actor, created_at: r.createdAt.toISOString(),
});

export const feedbackRoutes = [
  defineRoute({
    method: "post", path: BASE, operationId: "createFeedback", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Judge the trend's current detection: not a trend, or useful",
    description: "One verdict per caller per detection (a new one replaces it). The topic's evidence bar, the factor on the detector's " +
      "score thresholds, is 1 + 0.1 x (its detections judged not a trend - those judged useful), from 1 to 1.5: a topic marked " +
      "\"not a trend\" again and again needs a stronger anomaly to alert. Delete the feedback to undo it.",
    params: z.object({ trend_id: Id }), body: CreateFeedbackBody,
    responses: { 201: { description: "Recorded, with the topic's evidence bar", schema: FeedbackResult } },
    async handler({ deps, auth, params, body, atomically }) {
      const trend = await findAccountTrend(deps.db, auth.accountId, params.trend_id);
      if (!trend) throw notFound("Trend");
      return atomically(async (tx) => {
        const r = await recordFeedback(tx, trend, { verdict: body.verdict, actor: credentialActor(auth.credential), note: body.note });
        return {
          status: 201, body: { feedback: toFeedback(r.feedback), evidence_bar: r.evidenceBar },
          headers: { Location: `/api/trends/${trend.id}/feedback/${r.feedback.id}` },
        };
      });
    },
  }),
  defineRoute({
    method: "get", path: BASE, operationId: "listFeedback", tag: TAG, auth: "apiKey",
    summary: "The feedback on a trend's detections, newest first (the latest 200), with its topic's evidence bar",
    params: z.object({ trend_id: Id }),
    responses: { 200: { description: "The feedback", schema: FeedbackList } },
    async handler({ deps, auth, params }) {
      const trend = await findAccountTrend(deps.db, auth.accountId, params.trend_id);
      if (!trend) throw notFound("Trend");
      const r = await listFeedback(deps.db, trend);
      return { status: 200, body: { data: r.data.map(toFeedback), evidence_bar: r.evidenceBar } };
    },
  }),
  defineRoute({
    method: "delete", path: `${BASE}/{feedback_id}`, operationId: "deleteFeedback", tag: TAG, auth: "apiKey",
    summary: "Undo a verdict: the topic's evidence bar is recomputed without it", params: FeedbackParams,
    responses: { 204: { description: "Deleted" } },
    async handler({ deps, auth, params }) {
      if (!(await deleteFeedback(deps.db, auth.accountId, params.trend_id, params.feedback_id))) throw notFound("Feedback");
      return { status: 204 };
    },
  }),
];
