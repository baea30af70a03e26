import { Worker } from "bullmq";
import { z } from "zod";
import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";
import type { Config } from "@trendgate/config";
import { QUEUES, type OutboxPayload } from "@trendgate/contracts";
import { addOutboxMessages, createAccount, type Db, type NewOutboxMessage } from "@trendgate/db";
import { createLogger, type Logger } from "@trendgate/logger";
import { createRedis, dispatchOutbox, queuePrefix } from "@trendgate/queues";
import { DeferError } from "@trendgate/delivery";
import { outboxProcessor, type FinalOutcome, type OutboxHandler } from "../../apps/worker/src/outbox/index.ts";
import { createWorkerDeps } from "../../apps/worker/src/run-workers.ts";
import { OutboxSweeper } from "../../apps/worker/src/sweepers/outbox-sweeper.ts";
import type { Received } from "../helpers/receiver.ts";

// Shared by tests/outbox/*: a small outbox handler that posts each message to a local HTTP server (the test's
// stand-in for a provider), and a worker running it through the real outbox processor and sweeper.

export const QUEUE = QUEUES.chatMessages;

/** What a test message asks the test handler to do (the processor parses it with this schema, not the chat one). */
export const TestPayload = z.object({
  /** Posted to the receiver at this path. */
  path: z.string(),
  /** Defer (DeferError) this many times before sending. */
  defer: z.number().int().optional(),
  /** Throw a plain TypeError (a bug, not a ProviderError) this many times before sending. */
  explode: z.number().int().optional(),
});
export type TestPayload = z.infer<typeof TestPayload>;

export interface FinalSeen { id: string; outcome: FinalOutcome; error: string | null; attempts: number }

/** The receiver's status mapped onto the connector error vocabulary, as a real connector's client does. */
const kindOf = (status: number): ProviderErrorKind =>
  status === 429 ? "rate_limited" : status >= 500 ? "unavailable" : status === 401 ? "unauthorized" : status === 404 ? "not_found" : "bad_request";

/** The test handler: POSTs {message_id, attempt} to `baseUrl` + payload.path. */
export function httpHandler(baseUrl: string, finals: FinalSeen[] = [], calls: string[] = []): OutboxHandler<TestPayload> {
  const deferred = new Map<string, number>();
  const exploded = new Map<string, number>();
  const count = (m: Map<string, number>, id: string) => { const n = (m.get(id) ?? 0) + 1; m.set(id, n); return n; };
  return {
    concurrency: 20,
    async send(message, ctx) {
      calls.push(message.id);
      const p = message.payload;
      if (p.defer && count(deferred, message.id) <= p.defer) throw new DeferError(100);
      if (p.explode && count(exploded, message.id) <= p.explode) throw new TypeError("handler bug");
      let res: Response;
      try {
        res = await fetch(baseUrl + p.path, {
          method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ message_id: message.id, attempt: ctx.attempt }), signal: AbortSignal.timeout(10_000),
        });
      } catch (err) {
        throw new ProviderError("test", "unavailable", String(err));
      }
      const body = await res.text();
      if (res.ok) {
        ctx.responded(res.status);
        return { status: res.status, body };
      }
      const retryAfter = res.headers.get("retry-after");
      throw new ProviderError("test", kindOf(res.status), `HTTP ${res.status}`, { status: res.status, retryAfterMs: retryAfter ? Number(retryAfter) * 1000 : undefined });
    },
    onFinal(message, outcome, error) {
      finals.push({ id: message.id, outcome, error: error?.message ?? null, attempts: message.attempts });
    },
  };
}

/** The real outbox processor (with the test handler) in a BullMQ worker, and the outbox sweeper for its queue. */
export function startOutboxWorker(config: Config, baseUrl: string, opts: { sweep?: boolean; logger?: Logger } = {}) {
  const logger = opts.logger ?? createLogger({ level: "silent" });
  const deps = createWorkerDeps(config, logger);
  const finals: FinalSeen[] = [];
  const calls: string[] = [];
  const processor = outboxProcessor(QUEUE, () => httpHandler(baseUrl, finals, calls), TestPayload).create(deps);
  const connection = createRedis(config.REDIS_URL, "worker");
  const worker = new Worker(QUEUE, (job, token) => processor.process(job, token), {
    connection, prefix: queuePrefix(config.QUEUE_PREFIX, QUEUE), concurrency: processor.concurrency,
    lockDuration: config.WORKER_LOCK_DURATION_MS, stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
  });
  worker.on("error", () => {});
  const sweeper = new OutboxSweeper(deps, { deliveries: false, events: false, outbox: [QUEUE] });
  if (opts.sweep !== false) sweeper.start();
  let closed: Promise<void> | undefined;
  return {
    deps, worker, sweeper, finals, calls,
    close: () => (closed ??= (async () => {
      await sweeper.stop();
      await worker.close();
      await processor.close?.();
      connection.disconnect();
      await deps.queues.close();
      deps.queues.connection.disconnect();
      await deps.db.$disconnect();
    })()),
  };
}
export type OutboxWorker = ReturnType<typeof startOutboxWorker>;

/** Adds messages in a transaction, then dispatches them (the pattern producers follow). Returns the new ids. */
export async function addAndDispatch(db: Db, queues: Parameters<typeof dispatchOutbox>[0], msgs: NewOutboxMessage[]) {
  const rows = await db.$transaction((tx) => addOutboxMessages(tx, msgs));
  await dispatchOutbox(queues, rows);
  return rows.map((r) => r.id);
}

/** A test message on the chat-messages queue; its TestPayload is not a chat payload, hence the cast (the row is JSON). */
export const message = (accountId: string, payload: TestPayload, over: Omit<Partial<NewOutboxMessage<typeof QUEUE>>, "queue" | "payload"> = {}): NewOutboxMessage =>
  ({ queue: QUEUE, accountId, ...over, payload: payload as unknown as OutboxPayload<typeof QUEUE> });

export const newAccount = async (db: Db) => (await createAccount(db, "outbox test", "free")).id;

/** The requests the receiver got, as {message_id, attempt}. */
export const posted = (received: Received[]) => received.map((r) => JSON.parse(r.body) as { message_id: string; attempt: number });
