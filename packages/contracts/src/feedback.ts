import { z } from "zod";
import { Id, text, Timestamp } from "./common.ts";
import { EVIDENCE_BAR, FEEDBACK_VERDICTS } from "./vocabulary.ts";

// Feedback on a trend's detection, from the API or a chat card's buttons. The detector reads it per topic as an
// evidence bar (EVIDENCE_BAR): a topic whose detections were repeatedly "not a trend" needs a higher score to alert.

const barDescription = `The factor on the detector's score thresholds for this topic: 1 + ${EVIDENCE_BAR.step} x (detections judged not a trend - detections judged useful), from 1 to ${EVIDENCE_BAR.max}`;

export const CreateFeedbackBody = z
  .object({
    verdict: z.enum(FEEDBACK_VERDICTS).meta({ description: "`not_a_trend`: this detection was noise; `useful`: it was worth the alert" }),
    note: text({ max: 500, trim: true }).optional(),
  })
  .strict()
  .meta({ id: "CreateFeedbackBody" });

export const Feedback = z
  .object({
    id: z.string().meta({ example: "fb_01kaq3m2b4c5d6e7f8g9h0jkmn" }),
    trend_id: z.string(),
    detected_at: Timestamp.meta({ description: "Which detection of the trend it judges (a topic's trend can end and be detected again)" }),
    verdict: z.enum(FEEDBACK_VERDICTS),
    note: z.string().nullable(),
    actor: z.string().meta({ description: "`key:<id>`, `console:<session id>` or `chat:<team>/<user>`: one verdict per actor per detection" }),
    created_at: Timestamp,
  })
  .meta({ id: "Feedback" });
export type Feedback = z.infer<typeof Feedback>;

export const FeedbackResult = z
  .object({ feedback: Feedback, evidence_bar: z.number().meta({ description: barDescription }) })
  .meta({ id: "FeedbackResult" });

export const FeedbackList = z
  .object({ data: z.array(Feedback), evidence_bar: z.number().meta({ description: barDescription }) })
  .meta({ id: "FeedbackList" });

export const FeedbackParams = z.object({ trend_id: Id, feedback_id: Id });
