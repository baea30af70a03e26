import type { DefaultJobOptions } from "bullmq";

// The one place that decides how long jobs are retried and kept. Queue-specific schedules (webhook deliveries)
// build on this but live next to their processor's classification of errors.
export const DEFAULT_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 8,
  backoff: { type: "exponential", delay: 1000, jitter: 0.2 },
  // Redis keeps only a bounded tail of finished jobs; the durable record lives in Postgres.
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 10000 },
};
