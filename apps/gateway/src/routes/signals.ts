import crypto from "node:crypto";
import type { z } from "zod";
import { clipText, IngestSignalsBody, IngestSignalsResponse, QUEUES, Signal } from "@trendgate/contracts";
import { newId, signalStorageProblem } from "@trendgate/db";
import { defineRoute } from "../http/route.ts";

type Rejection = z.infer<typeof IngestSignalsResponse>["rejections"][number];

// What one answer may echo back, so a batch of 1,000 bad items with huge ids or keys cannot produce a huge answer:
// the first REJECTIONS_ECHO_MAX rejections in detail (`rejected` is always the full count), each id up to the
// longest valid id, a few issues per item, each issue's path and message clipped.
export const REJECTIONS_ECHO_MAX = 100;
const ECHO_ID_MAX = 200;
const ECHO_ERRORS_MAX = 5;
const ECHO_PATH_MAX = 100;
const ECHO_MESSAGE_MAX = 200;

export const signalRoutes = [
  defineRoute({
    method: "post", path: "/api/signals", operationId: "ingestSignals", tag: "Signals", auth: "apiKey", idempotent: true,
    summary: "Ingest a batch of signals from your own feeds",
    description:
      "Each signal is validated on its own: valid ones are queued for aggregation, invalid ones are counted in " +
      `\`rejected\` and the first ${REJECTIONS_ECHO_MAX} are listed in \`rejections\` with their index and reasons ` +
      "(`rejections_truncated` tells when more were left out). A (source, id) repeated within the batch is stored " +
      "once and counted in `duplicates`; a signal whose (source, id) was seen in an earlier batch is ignored. A signal " +
      "that cannot be stored after all is reported as a `signals.rejected` event in GET /api/events.",
    body: IngestSignalsBody,
    responses: { 202: { description: "Accepted for processing", schema: IngestSignalsResponse } },
    async handler({ deps, auth, body, idempotencyKey }) {
      const accepted: Signal[] = [];
      const indexes: number[] = [];
      const rejections: Rejection[] = [];
      const seen = new Set<string>();
      let rejected = 0;
      let duplicates = 0;
      const reject = (index: number, raw: unknown, errors: { path: string; message: string }[]) => {
        rejected++;
        if (rejections.length >= REJECTIONS_ECHO_MAX) return;
        const id = (raw as { id?: unknown } | null)?.id;
        rejections.push({
          index,
          id: typeof id === "string" ? clipText(id, ECHO_ID_MAX) : null,
          errors: errors.slice(0, ECHO_ERRORS_MAX).map((e) => ({ path: clipText(e.path, ECHO_PATH_MAX), message: clipText(e.message, ECHO_MESSAGE_MAX) })),
        });
      };
      body.signals.forEach((raw, index) => {
        const r = Signal.safeParse(raw);
        if (!r.success) return reject(index, raw, r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })));
        // What the gateway accepts the worker can store: values Postgres refuses are rejected here too.
        const problem = signalStorageProblem(r.data);
        if (problem) return reject(index, raw, [{ path: problem.path, message: problem.message }]);
        const key = JSON.stringify([r.data.source, r.data.id]);
        if (seen.has(key)) { duplicates++; return; }
        seen.add(key);
        accepted.push(r.data);
        indexes.push(index);
      });
      // With an Idempotency-Key the batch id (and job id) derives from it: a retry after a crash re-adds the same job,
      // which BullMQ ignores, instead of queueing the batch twice.
      const batchId = idempotencyKey
        ? `batch_${crypto.createHash("sha256").update(`${auth.accountId}\n${idempotencyKey}`).digest("hex").slice(0, 26)}`
        : newId("batch");
      // `indexes`: each queued signal's index in this request, so the worker's events name the index the caller knows.
      const job = { account_id: auth.accountId, batch_id: batchId, signals: accepted, indexes };
      if (accepted.length) await deps.queues.add(QUEUES.signals, job, { jobId: batchId });
      return {
        status: 202,
        body: {
          batch_id: batchId, accepted: accepted.length, rejected, rejections,
          rejections_truncated: rejected > rejections.length, duplicates,
        },
      };
    },
  }),
];
