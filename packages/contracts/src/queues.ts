import { z } from "zod";
import { Signal } from "./signals.ts";
import { TrendEvent } from "./trend-events.ts";

// Every BullMQ queue the system uses, and the payload each job carries. Payloads carry ids and data, never secrets:
// workers load credentials from Postgres.
export const QUEUES = {
  signals: "signals-ingest",
  trendEvents: "trend-events",
  webhookDeliveries: "webhook-deliveries",
  trendDetection: "trend-detection",
  socialPoll: "social-poll",
  // Outbox queues (one per kind of outbound job; rows in outbox_messages, drained by apps/worker/src/outbox):
  chatMessages: "chat-messages",
  workflowPushes: "workflow-pushes",
  conversionEvents: "conversion-events",
  adsApplies: "ads-applies",
  // CSV exports of ads reports too large to stream in one response (pulled from the providers, then stored).
  reportExports: "report-exports",
  // Workflow pushes a workflow took, confirmed from its own record of runs (or sent again): one pass per interval.
  workflowConfirmations: "workflow-confirmations",
  // The operator queue's clock: snoozes that ended, critical items to re-notify.
  operatorTicks: "operator-ticks",
  // Bounded storage: one pass per RETENTION_INTERVAL_SECONDS deletes rows past their retention (docs/operating.md "Retention").
  retention: "retention",
  // Webhooks' clock: account events fanned out to the subscriptions that list them, held trigger-window firings decided.
  webhookTicks: "webhook-ticks",
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * The queues drained by the shared outbox (apps/worker/src/outbox): rows in outbox_messages, one job per attempt,
 * re-queued by the outbox sweeper when lost. A new kind of outbound job adds its queue here.
 */
export const OUTBOX_QUEUES = [QUEUES.chatMessages, QUEUES.workflowPushes, QUEUES.conversionEvents, QUEUES.adsApplies, QUEUES.reportExports] as const;
export type OutboxQueueName = (typeof OUTBOX_QUEUES)[number];

/** One attempt of one outbox message; the worker loads the row (payload, connection) from Postgres. */
export const OutboxJob = z.object({ message_id: z.string(), attempt: z.number().int().min(1) });
export type OutboxJob = z.infer<typeof OutboxJob>;

export const JOB_PAYLOADS = {
  [QUEUES.signals]: z.object({
    account_id: z.string(), batch_id: z.string(), signals: z.array(Signal),
    indexes: z.array(z.number().int().min(0)).optional().meta({ description: "Each signal's position in the request (for rejection events)" }),
  }),
  // A batch of events as published together (not secret); the rows in trend_events are the durable copies.
  [QUEUES.trendEvents]: z.object({ events: z.array(TrendEvent).min(1) }),
  // Ids and the (non-secret) body; the worker loads the subscription and its secret from Postgres.
  [QUEUES.webhookDeliveries]: z.object({
    delivery_id: z.string(),
    webhook_id: z.string(),
    attempt: z.number().int().min(1),
    // Why this attempt is made; it is what the attempt's record shows (a replayed test delivery's is `replay`).
    trigger: z.enum(["trend_event", "account_event", "test", "replay", "recovery"]),
    // The delivery is a test (sent with X-Webhook-Test, no webhook.delivery_failed event), whatever the attempt's
    // trigger. Absent (jobs queued before it existed): `trigger === "test"`.
    test: z.boolean().optional(),
    body: z.string(),
    // The event behind it (sent as headers; the body's fields are fixed): a trend event's type and trend, or an
    // operational event's type. Absent: read from the delivery row.
    event: z.object({ type: z.string(), trend_id: z.string().nullable().optional() }).optional(),
  }),
  // A detection pass. {}: the scheduler's tick (fans out one job per account shard); {account_id}: one account, all
  // topics, now; {account_id, shard, shards}: the topics of that account whose id hashes to `shard` of `shards`.
  [QUEUES.trendDetection]: z.object({
    account_id: z.string().optional(),
    shard: z.number().int().min(0).optional(),
    shards: z.number().int().min(1).optional(),
  }),
  // {} = the scheduler's tick (enqueue due connections); {connection_id} = poll that connection now; with `action`,
  // run that action instead (its input is on the connection's recent actions, found by action_id).
  [QUEUES.socialPoll]: z.object({
    connection_id: z.string().optional(),
    action: z.string().optional().meta({ description: "An action name of the provider (its connector lists them)" }),
    action_id: z.string().optional(),
  }),
  [QUEUES.chatMessages]: OutboxJob,
  [QUEUES.workflowPushes]: OutboxJob,
  [QUEUES.conversionEvents]: OutboxJob,
  [QUEUES.adsApplies]: OutboxJob,
  [QUEUES.reportExports]: OutboxJob,
  // {} = the scheduler's tick.
  [QUEUES.workflowConfirmations]: z.object({}),
  // {} = the scheduler's tick.
  [QUEUES.operatorTicks]: z.object({}),
  // {} = the scheduler's tick.
  [QUEUES.retention]: z.object({}),
  // {} = the scheduler's tick.
  [QUEUES.webhookTicks]: z.object({}),
} satisfies Record<QueueName, z.ZodType>;

export type JobPayload<Q extends QueueName> = z.infer<(typeof JOB_PAYLOADS)[Q]>;
