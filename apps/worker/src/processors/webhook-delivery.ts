import { JOB_PAYLOADS, QUEUES, type BodyTemplate } from "@trendgate/contracts";
import { deliveryBody, enqueueDelivery, isTestDelivery, renderBody, WebhookSender, type DeliveryEvent, type DeliveryJob } from "@trendgate/webhooks";
import {
  isTransientDbError, loadDeliveryContent, loadDeliveryState, loadSubscriptionForSend, markDeliveryMissed, newId, recordAccountEvents, recordAttempts, recordInterruptedAttempt,
  type AttemptRecord, type SendableSubscription,
} from "@trendgate/db";
import { retrySchedules } from "@trendgate/config";
import {
  AttemptSpool, BatchWriter, deferJob, DestinationLimiter, follow, InFlightMarks, judge, ranBefore, record, SendWindow, TRANSIENT_RETRY_DELAYS_MS,
  webhookFailure, type Ledger,
} from "@trendgate/delivery";
import { TtlCache } from "../ttl-cache.ts";
import type { ProcessorFactory } from "./types.ts";

/**
 * Sends one attempt of one webhook delivery, through the attempt loop every outbound job shares
 * (@trendgate/delivery attempts/loop.ts: already recorded? send, judge, record, queue the next, fail a failed attempt's job).
 * What is webhook's own is here: the subscription (cached, re-read before holding or dropping on a cached word), the
 * body (inline in the job, else read from the row), the per-endpoint and per-host limiter, the subscription's rate
 * limit (a fleet-wide SendWindow: a send over it waits its turn, its job delayed, no attempt used or recorded), the
 * signed request, the
 * execution record, and disabling (410 Gone now, or failing for WEBHOOK_DISABLE_AFTER_SECONDS, decided by the
 * batched write). Every attempt's record is written before its job completes; one Postgres cannot take is kept in
 * Redis (AttemptSpool, as the outbox kinds do) and fails the job, whose next run writes it before anything else: a
 * send is never repeated for want of its record, across a database outage or a worker killed after it. An attempt is
 * marked in flight (InFlightMarks) before its request goes out: a job that runs again after its worker died mid-send
 * records that send as `interrupted` before sending the attempt again, so every send a receiver saw is in the log.
 */
/**
 * The body as the subscription wants it: through its template when it has one. A template was checked against every
 * event type when saved; should one still fail, the spec's body goes out (the receiver's answer shows it) and it is logged.
 */
function rendered(sub: SendableSubscription, body: string, event: DeliveryEvent | null | undefined, logger: { warn: (o: object, m: string) => void }): string {
  if (!sub.bodyTemplate) return body;
  try {
    return renderBody(sub.bodyTemplate as BodyTemplate, body, event?.type ?? null);
  } catch (err) {
    logger.warn({ webhook_id: sub.id, err: String(err) }, "body template did not render; sent the plain body");
    return body;
  }
}

/** webhook.delivery_failed is recorded at most once per subscription in this long. */
const DELIVERY_FAILED_EVERY_MS = 3600_000;

export const webhookDelivery: ProcessorFactory = {
  queue: QUEUES.webhookDeliveries,
  create({ config, logger, db, queues, outbound, secrets }) {
    const sender = new WebhookSender(outbound, secrets);
    const limiter = new DestinationLimiter({ perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY, perHost: config.WEBHOOK_DESTINATION_CONCURRENCY });
    // rate_limit: at most that many requests reach the endpoint in any second (a send counts until a second after its answer).
    const rateWindow = new SendWindow(queues.connection, config.QUEUE_PREFIX, {
      windowMs: 1000, holdMs: config.OUTBOUND_CONNECT_TIMEOUT_MS + config.OUTBOUND_TIMEOUT_MS + 5000, graceMs: 10_000,
    });
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
    const spool = new AttemptSpool<AttemptRecord>(queues.connection, config.QUEUE_PREFIX, QUEUES.webhookDeliveries,
      { id: (r) => r.execution.deliveryId, attempt: (r) => r.execution.attempt },
      (r) => ({
        ...r, execution: { ...r.execution, nextRetryAt: r.execution.nextRetryAt ? new Date(r.execution.nextRetryAt) : null },
        delivery: { ...r.delivery, nextAttemptAt: new Date(r.delivery.nextAttemptAt) },
      }));
    // The jobs of a delivery: its key is the job's data, so a retry carries the body and event its attempt read.
    const ledger: Ledger<DeliveryJob, AttemptRecord> = {
      logger,
      ref: (job) => ({ delivery_id: job.delivery_id }),
      async load(job) {
        const row = await loadDeliveryState(db, job.delivery_id);
        return row && { status: row.status, attempts: row.attempts, nextAttemptAt: row.next_attempt_at };
      },
      // recordAttempts moves each delivery to the record's state (never back): it reports no per-row result. A record
      // the writer could not write even after its re-tries is kept in the spool and fails the job.
      async write(r) {
        try {
          await writer.add(r);
        } catch (err) {
          await spool.keep(r).catch((e) => logger.error({ delivery_id: r.execution.deliveryId, attempt: r.execution.attempt, err: String(e) }, "attempt record neither written nor kept"));
          logger.warn({ delivery_id: r.execution.deliveryId, attempt: r.execution.attempt, err: String(err) }, "attempt record not written; kept until the database answers");
          throw err;
        }
        return { recorded: true, status: r.delivery.status };
      },
      queue: (job, attempt, delayMs) => enqueueDelivery(queues, { ...job, attempt }, { delayMs }).then(() => undefined),
    };
    /** What an attempt's in-flight mark keeps: what its `interrupted` execution needs that the next run cannot read. */
    type Begun = { id: string; attempt: number; trigger: string; url: string; bodyBytes: number; startedAt: number };
    const inFlight = new InFlightMarks<Begun>(queues.connection, config.QUEUE_PREFIX, QUEUES.webhookDeliveries);
    /** An attempt sent by an earlier run whose record could not be written: written (and followed) before anything else. */
    const writeKept = async (data: DeliveryJob) => {
      const kept = await spool.find(data.delivery_id);
      if (!kept) return;
      const e = kept.execution;
      const judged = { outcome: e.outcome, nextAt: e.nextRetryAt, errorClass: e.errorClass, errorMessage: e.errorMessage };
      await follow(ledger, { ...data, attempt: e.attempt }, e.attempt, judged, await ledger.write(kept));
      await spool.written(kept);
    };

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
        await writeKept(data);
        if (job.attemptsMade > 0 || job.stalledCounter > 0) { // only a job that ran before can find its attempt recorded
          const state = await ledger.load(data);
          if (!state) return { skipped: "delivery deleted" };
          if (await ranBefore(ledger, data, data.attempt, state)) return { skipped: "attempt already recorded" };
          const begun = await inFlight.find(data.delivery_id, data.attempt);
          if (begun) { // its worker died during the request: the receiver may have it
            await recordInterruptedAttempt(db, {
              id: begun.id, accountId: entry.sub.accountId, subscriptionId: entry.sub.id, deliveryId: data.delivery_id, attempt: begun.attempt,
              trigger: begun.trigger, requestUrl: begun.url, requestBodyBytes: begun.bodyBytes, durationMs: Date.now() - begun.startedAt,
            });
          }
        }
        let { body, event }: { body: string; event?: DeliveryEvent | null } = data;
        const test = isTestDelivery(data);
        if (!body || (!event && !test)) { // a digest, replay, recovery or sweep: read the row
          const stored = await loadDeliveryContent(db, data.delivery_id);
          if (!stored) return { skipped: "delivery deleted" };
          body ||= deliveryBody(stored.payload);
          event = stored.event;
        }

        const host = new URL(entry.sub.url).host;
        if (!limiter.tryAcquire(entry.sub.id, host)) // this endpoint or host is busy: give the slot to others, try again shortly
          return deferJob(job, token, 100 + Math.round(Math.random() * 400));
        // Over the rate limit: the job waits its turn, delayed rather than failed (`finally` releases the endpoint slot).
        const lane = `webhook:${entry.sub.id}`;
        const sendId = `${data.delivery_id}-${data.attempt}`;
        let sent;
        let holding = false;
        try {
          if (entry.sub.rateLimit !== null) {
            const wait = await rateWindow.acquire(lane, sendId, entry.sub.rateLimit);
            if (wait > 0) return await deferJob(job, token, wait);
            holding = true;
          }
          const out = rendered(entry.sub, body, event, logger);
          await inFlight.mark(data.delivery_id, {
            id: newId("exe"), attempt: data.attempt, trigger: data.trigger, url: entry.sub.url, bodyBytes: Buffer.byteLength(out), startedAt: Date.now(),
          });
          sent = await sender.send(entry.sub, entry.secrets, data.delivery_id, out, test, event);
        } finally {
          limiter.release(entry.sub.id, host);
          if (holding) {
            await rateWindow.release(lane, sendId)
              .catch((err) => logger.warn({ webhook_id: entry.sub.id, err: String(err) }, "rate limit unit not released; it frees when its hold ends"));
          }
        }
        const { result, verdict } = sent;
        const errorMessage = result.error?.message ?? (verdict.ok ? null : `HTTP ${result.status}`);
        // Never `unknown`: a webhook failure has no mayHaveActed.
        const judged = judge(webhookFailure(verdict, result.status, errorMessage ?? ""), schedule, data.attempt);
        const outcome = judged.outcome === "unknown" ? "failed" : judged.outcome;
        const settled = await record(ledger, { ...data, body, event: event ?? undefined }, data.attempt, judged, {
          execution: {
            id: newId("exe"), accountId: entry.sub.accountId, subscriptionId: entry.sub.id, deliveryId: data.delivery_id,
            attempt: data.attempt, trigger: data.trigger, outcome, requestUrl: entry.sub.url, requestHeaders: sent.headersSent,
            requestBodyBytes: sent.bodyBytes, responseStatus: result.status, responseBody: result.status === null ? null : result.body,
            responseBodyTruncated: result.truncated, durationMs: result.durationMs, errorClass: verdict.errorClass,
            errorMessage, nextRetryAt: judged.nextAt,
          },
          delivery: { status: outcome === "retrying" ? "pending" : outcome, attempts: data.attempt, nextAttemptAt: judged.nextAt ?? new Date(), lastError: errorMessage },
          disableReason: verdict.gone ? "the endpoint answered 410 Gone" : undefined,
        });
        inFlight.clear(data.delivery_id); // recorded (or kept in the spool, which the next run writes first)
        if (verdict.gone) subs.delete(entry.sub.id);
        if (outcome === "failed" && !test) {
          // Retries exhausted: an operational event (at most one an hour per subscription, so a dead endpoint does
          // not flood the account's events), pushed to the subscriptions that list it.
          await recordAccountEvents(db, [{
            accountId: entry.sub.accountId, type: "webhook.delivery_failed",
            data: { webhook_id: entry.sub.id, delivery_id: data.delivery_id, attempts: data.attempt, error: errorMessage, ...(event ? { event_type: event.type } : {}) },
            once: { match: { webhook_id: entry.sub.id }, since: new Date(Date.now() - DELIVERY_FAILED_EVERY_MS) },
          }]).catch((err) => logger.warn({ err: String(err), delivery_id: data.delivery_id }, "webhook.delivery_failed not recorded"));
        }
        if (settled.failure) throw settled.failure;
        return { outcome, status: result.status, attempt: data.attempt };
      },
    };
  },
};
