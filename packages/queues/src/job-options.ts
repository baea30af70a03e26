import type { DefaultJobOptions } from "bullmq";

// BullMQ's own options for every job: how often BullMQ runs a job that threw, and how long finished jobs are kept.
// On delivery queues each attempt is its own job, timed by retrySchedules (@trendgate/config) and the verdict
// (packages/delivery/src/attempts/verdict.ts); there BullMQ's runs only cover a job that failed before its attempt was recorded.
export const DEFAULT_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 8,
  backoff: { type: "exponential", delay: 1000, jitter: 0.2 },
  // Redis keeps only a bounded tail of finished jobs; the durable record lives in Postgres.
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 10000 },
};
