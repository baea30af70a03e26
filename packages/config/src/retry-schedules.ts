// When each outbound queue tries a failed attempt again: the only place retry timings are set (the verdict,
// packages/delivery/src/attempts/verdict.ts, decides whether to use them).

export interface RetrySchedule {
  /** Delay before attempt 2, 3, ... in seconds; its length + 1 is the number of attempts. */
  delaysSeconds: number[];
  /** +- fraction applied to each delay so that messages failing together do not retry in lockstep. */
  jitter: number;
  /** The longest Retry-After (or quota reset) honoured; beyond it the schedule's own delay is used. */
  maxRetryAfterSeconds: number;
}

/** The outbox's spread of each retry delay (webhooks: WEBHOOK_RETRY_JITTER). */
export const OUTBOX_RETRY_JITTER = 0.2;
/** The outbox's cap on a Retry-After or quota reset (webhooks: WEBHOOK_MAX_RETRY_AFTER_SECONDS). */
export const OUTBOX_MAX_RETRY_AFTER_SECONDS = 86_400;

/** Webhook deliveries (webhook-deliveries) and every outbox queue (OUTBOX_QUEUES). */
export function retrySchedules(config: {
  WEBHOOK_RETRY_SCHEDULE_SECONDS: number[]; WEBHOOK_RETRY_JITTER: number; WEBHOOK_MAX_RETRY_AFTER_SECONDS: number; OUTBOX_RETRY_SCHEDULE_SECONDS: number[];
}): { webhooks: RetrySchedule; outbox: RetrySchedule } {
  return {
    webhooks: {
      delaysSeconds: config.WEBHOOK_RETRY_SCHEDULE_SECONDS,
      jitter: config.WEBHOOK_RETRY_JITTER,
      maxRetryAfterSeconds: config.WEBHOOK_MAX_RETRY_AFTER_SECONDS,
    },
    outbox: {
      delaysSeconds: config.OUTBOX_RETRY_SCHEDULE_SECONDS,
      jitter: OUTBOX_RETRY_JITTER,
      maxRetryAfterSeconds: OUTBOX_MAX_RETRY_AFTER_SECONDS,
    },
  };
}
