import { Queue, type JobsOptions } from "bullmq";
import { QUEUES, type JobPayload, type QueueName } from "@trendgate/contracts";
import { queuePrefix, type RedisConnection } from "./connection.ts";
import { DEFAULT_JOB_OPTIONS } from "./job-options.ts";

/** Producers for every queue, sharing one fail-fast connection.  */
export class Queues {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    readonly connection: RedisConnection,
    readonly prefix: string,
  ) {}

  get(name: QueueName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: queuePrefix(this.prefix, name), defaultJobOptions: DEFAULT_JOB_OPTIONS });
      q.on("error", () => {}); // surfaced to callers through rejected add() calls
      this.queues.set(name, q);
    }
    return q;
  }

  all(): Queue[] {
    return (Object.values(QUEUES) as QueueName[]).map((n) => this.get(n));
  }

  // Typed by the contract; the gateway has validated the data already and workers parse it again on receipt.
  async add<Q extends QueueName>(name: Q, payload: JobPayload<Q>, opts: JobsOptions = {}) {
    return this.get(name).add(name, payload, opts);
  }

  async close() {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
