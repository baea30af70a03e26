import type { RunAction } from "../kind.ts";
import { GoogleTrendsClient } from "./client.ts";
import { TrendsValidateBody, type GoogleTrendsOptions } from "./schemas.ts";
import { accessTokenOf } from "./token.ts";

/** How long a validation waits for Google's long-running operation. */
const TRENDS_POLL = { pollIntervalMs: 1000, maxWaitMs: 60_000 };

/** Checks a term's momentum: recent search interest against the baseline; the verdict is the action's result. */
export const validateAction: RunAction<{ term: string }> = {
  kind: "run",
  name: "validate",
  operationId: "validateWithGoogleTrends",
  summary: "Check a term's momentum against Google Trends search interest",
  description: "Queues a momentum validation: recent search interest (`recent_days`) against the baseline (`baseline_days`). " +
    "The verdict (`confirmed`, `refuted`, `inconclusive`), ratio and reason appear in the status' `actions`.",
  body: TrendsValidateBody,
  async run(ctx, conn, input) {
    const options = conn.options as GoogleTrendsOptions;
    const term = String(input.term);
    const token = await accessTokenOf(ctx, conn.credentials, options.token_url);
    const r = await new GoogleTrendsClient(ctx).validateMomentum(
      { term, geo: options.geo, recentDays: options.recent_days ?? 7, baselineDays: options.baseline_days ?? 28 }, token, TRENDS_POLL);
    return {
      term, verdict: r.verdict, ratio: r.ratio === Infinity ? "Infinity" : r.ratio, recent_mean: r.recentMean, baseline_mean: r.baselineMean,
      points: r.points.length, reason: r.reason,
    };
  },
};
