import { JOB_PAYLOADS, QUEUES, WebhookPayload } from "@trendgate/contracts";
import { enqueueDelivery, serializePayload, WebhookSender, type DeliveryEvent } from "@trendgate/connector-webhook";
import {
  isTransientDbError, loadDeliveryContent, loadDeliveryState, loadSubscriptionForSend, markDeliveryMissed, newId, recordAttempts, type AttemptRecord, type SendableSubscription,
} from "@trendgate/db";
import { retrySchedules } from "@trendgate/config";
import { BatchWriter, DestinationLimiter, TRANSIENT_RETRY_DELAYS_MS } from "@trendgate/delivery";
import { AttemptFailedError } from "../outbox/attempt-failed.ts";
import { deferJob } from "../outbox/defer.ts";
import { decide, webhookFailure } from "../outbox/verdict.ts";
import { TtlCache } from "../ttl-cache.ts";
import type { ProcessorFactory } from "./types.ts";

/**
 * Sends one attempt of one webhook delivery and records it. Retries are new delayed jobs (one per attempt) whose
 * time comes from the retry verdict (../outbox/verdict.ts), so the attempt log, the delivery row and the queue
 * agree; the sweeper re-queues any attempt whose job was lost.
 *
 * Once a request has been sent, nothing may fail the job: BullMQ would run it again and send it again. So the
 * attempt record is written by a BatchWriter that re-tries transient database errors itself (the write is
 * idempotent), and a job that does run again (after a crash, or a failure) first checks whether its attempt was
 * already recorded, and then only makes sure the next one is queued. An attempt that failed ends its job failed
 * (AttemptFailedError, which BullMQ does not retry) once it is recorded and the next attempt queued.
 */
export const webhookDelivery: ProcessorFactory = {
  queue: QUEUES.webhookDeliveries,
  create({ config, logger, db, queues, outbound, secrets }) {
    const sender = new WebhookSender(outbound, secrets);
    const limiter = new DestinationLimiter({ perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY, perHost: config.WEBHOOK_DESTINATION_CONCURRENCY });
    const subs = new TtlCache<{ sub: SendableSubscription; secrets: string[] } | null>(config.WEBHOOK_SUBSCRIPTION_CACHE_MS);
    const loadSub = async (id: string) => {
      const sub = await loadSubscriptionForSend(db, id);
      return sub && { sub, secrets: sender.secretsOf(sub) };
    };
    const schedule = retrySchedules(config).webhooks;
    const writer = new BatchWriter<AttemptRecord>(async (records) => {
      const disabled = await recordAttempts(db, records, config.WEBHOOK_DISABLE_AFTER_SECONDS);
      for (const d of disabled) {
        subs.delete(d.id);
        logger.warn({ webhook_id: d.id, account_id: d.account_id, reason: d.disabled_reason }, "webhook subscription disabled");
      }
    }, {
      maxItems: config.WEBHOOK_RECORD_BATCH_SIZE, maxWaitMs: config.WEBHOOK_RECORD_BATCH_WAIT_MS,
      maxConcurrent: 4, isTransient: isTransientDbError, retryDelaysMs: TRANSIENT_RETRY_DELAYS_MS,
    });

    return {
      concurrency: config.WEBHOOK_CONCURRENCY,
      close: () => writer.flush(),
      async process(job, token) {
        const data = JOB_PAYLOADS[QUEUES.webhookDeliveries].parse(job.data);
        let entry = await subs.get(data.webhook_id, () => loadSub(data.webhook_id));
        if (entry && entry.sub.status !== "active") { // held or dropped on a cached word? read the row itself first
          subs.delete(data.webhook_id);
          entry = await subs.get(data.webhook_id, () => loadSub(data.webhook_id));
        }
        if (!entry) return { skipped: "subscription deleted" };
        if (entry.sub.status === "disabled") { // like a firing while disabled: failed, for `recover` to send later
          await markDeliveryMissed(db, data.delivery_id, data.attempt - 1);
          return { skipped: "subscription disabled" };
        }
        if (entry.sub.status !== "active") return { skipped: `subscription ${entry.sub.status}` }; // held; resume re-queues it
        if (job.attemptsMade > 0 || job.stalledCounter > 0) { // this job ran before: was its attempt recorded then?
          const row = await loadDeliveryState(db, data.delivery_id);
          if (!row) return { skipped: "delivery deleted" };
          if (row.attempts >= data.attempt) {
            if (row.status === "pending" && row.attempts === data.attempt)
              await enqueueDelivery(queues, { ...data, attempt: data.attempt + 1 }, { delayMs: row.next_attempt_at.getTime() - Date.now() });
            return { skipped: "attempt already recorded" };
          }
        }
        let { body, event }: { body: string; event?: DeliveryEvent | null } = data;
        if (!body || (!event && data.trigger !== "test")) { // a digest, replay, recovery or sweep: read the row
          const stored = await loadDeliveryContent(db, data.delivery_id);
          if (!stored) return { skipped: "delivery deleted" };
          body ||= serializePayload(WebhookPayload.parse(stored.payload));
          event = stored.event;
        }

        const host = new URL(entry.sub.url).host;
        if (!limiter.tryAcquire(entry.sub.id, host)) // this endpoint or host is busy: give the slot to others, try again shortly
          return deferJob(job, token, 100 + Math.round(Math.random() * 400));
        let sent;
        try {
          sent = await sender.send(entry.sub, entry.secrets, data.delivery_id, body, data.trigger === "test", event);
        } finally {
          limiter.release(entry.sub.id, host);
        }
        const { result, verdict } = sent;
        const errorMessage = result.error?.message ?? (verdict.ok ? null : `HTTP ${result.status}`);
        const failure = webhookFailure(verdict, result.status, errorMessage ?? "");
        const judged = failure && decide(failure, schedule, data.attempt); // never `unknown`: a webhook failure has no mayHaveActed
        const outcome = !judged ? "succeeded" : judged.outcome === "retrying" ? "retrying" : "failed";
        const delay = judged?.delayMs ?? null;
        const nextAt = delay !== null ? new Date(Date.now() + delay) : null;
        const recorded = writer.add({
          execution: {
            id: newId("exe"), accountId: entry.sub.accountId, subscriptionId: entry.sub.id, deliveryId: data.delivery_id,
            attempt: data.attempt, trigger: data.trigger, outcome, requestUrl: entry.sub.url, requestHeaders: sent.headersSent,
            requestBodyBytes: sent.bodyBytes, responseStatus: result.status, responseBody: result.status === null ? null : result.body,
            responseBodyTruncated: result.truncated, durationMs: result.durationMs, errorClass: verdict.errorClass,
            errorMessage, nextRetryAt: nextAt,
          },
          delivery: { status: outcome === "retrying" ? "pending" : outcome, attempts: data.attempt, nextAttemptAt: nextAt ?? new Date(), lastError: errorMessage },
          disableReason: verdict.gone ? "the endpoint answered 410 Gone" : undefined,
        });
        if (!nextAt) {
          // A final outcome does not fail the job for its record (the writer re-tries transient failures on its own).
          // Until the record commits, the delivery row still says pending; after a crash the sweeper sends it again:
          // the same at-least-once as a crash mid-request.
          const written = recorded.catch((err) => logger.warn({ delivery_id: data.delivery_id, err: String(err) }, "attempt record not written; the sweeper will retry the delivery"));
          // A success does not wait for it (its completed job tells the sweeper it was sent); a failed job would not
          // (requeueLost counts a failed job as lost unless the row moved past its attempt), so a final failure waits.
          if (!verdict.ok) await written;
        } else {
          // The next attempt must not race this attempt's record. If the record cannot be written even after the
          // writer's re-tries, the job fails and BullMQ runs it again: it finds the attempt unrecorded and sends it
          // again (at least once), so that no attempt goes unrecorded.
          await recorded;
        }
        if (verdict.gone) subs.delete(entry.sub.id);
        if (nextAt) {
          await enqueueDelivery(queues, { ...data, body, event: event ?? undefined, attempt: data.attempt + 1 }, { delayMs: delay! })
            .catch((err) => logger.warn({ delivery_id: data.delivery_id, err: String(err) }, "retry not queued; the sweeper will queue it"));
        }
        if (!verdict.ok) throw new AttemptFailedError(data.attempt, `${verdict.errorClass}: ${errorMessage}`, nextAt);
        return { outcome, status: result.status, attempt: data.attempt };
      },
    };
  },
};
