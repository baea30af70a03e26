import type { z } from "zod";
import { IngestSignalsBody, IngestSignalsResponse, QUEUES, Signal } from "@trendgate/contracts";
import { newId } from "@trendgate/db";
import { defineRoute } from "../http/route.ts";

export const signalRoutes = [
  defineRoute({
    method: "post", path: "/api/signals", operationId: "ingestSignals", tag: "Signals", auth: "apiKey", idempotent: true,
    summary: "Ingest a batch of signals from your own feeds",
    description:
      "Each signal is validated on its own: valid ones are queued for aggregation, invalid ones are listed in " +
      "`rejections` with their index and reasons. A signal whose (source, id) was seen before is ignored.",
    body: IngestSignalsBody,
    responses: { 202: { description: "Accepted for processing", schema: IngestSignalsResponse } },
    async handler({ deps, auth, body }) {
      const accepted: Signal[] = [];
      const rejections: z.infer<typeof IngestSignalsResponse>["rejections"] = [];
      body.signals.forEach((raw, index) => {
        const r = Signal.safeParse(raw);
        if (r.success) accepted.push(r.data);
        else rejections.push({
          index,
          id: typeof (raw as { id?: unknown })?.id === "string" ? (raw as { id: string }).id : null,
          errors: r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
        });
      });
      const batchId = newId("batch");
      if (accepted.length) await deps.queues.add(QUEUES.signals, { account_id: auth.accountId, batch_id: batchId, signals: accepted }, { jobId: batchId });
      return { status: 202, body: { batch_id: batchId, accepted: accepted.length, rejected: rejections.length, rejections } };
    },
  }),
];
