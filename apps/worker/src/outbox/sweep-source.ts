import type { OutboxJob, OutboxQueueName } from "@trendgate/contracts";
import { findOverdueOutboxMessages, pendingOutboxMessages, type OverdueOutboxMessage } from "@trendgate/db";
import { outboxJobId, requeueLost } from "@trendgate/queues";
import type { WorkerDeps } from "../processors/types.ts";
import type { SweepSource } from "../sweepers/outbox-sweeper.ts";

const jobIdOf = (j: OutboxJob) => outboxJobId(j.message_id, j.attempt);

/** What the outbox sweeper re-queues for one outbox queue: its overdue pending messages whose next attempt's job is lost. */
export function outboxSweepSource(deps: WorkerDeps, queue: OutboxQueueName): SweepSource<OverdueOutboxMessage> {
  const { db, queues, config } = deps;
  return {
    name: queue,
    find: (after, limit) => findOverdueOutboxMessages(db.$pool, queue, config.SWEEP_GRACE_SECONDS, limit, after),
    requeue: (rows) => requeueLost(queues, queue, rows.map((m): OutboxJob => ({ message_id: m.id, attempt: m.attempts + 1 })), jobIdOf, async (jobs) => {
      const pending = await pendingOutboxMessages(db.$pool, jobs.map((j) => ({ id: j.message_id, attempts: j.attempt - 1 })));
      return new Set(jobs.filter((j) => pending.has(j.message_id)).map(jobIdOf));
    }),
  };
}
