import { z } from "zod";
import { OUTBOX_STATUSES, pageQuery } from "@trendgate/contracts";
import { listOutboxMessages, outboxAttemptsOf, type OutboxAttemptRow, type OutboxMessage } from "@trendgate/db";
import type { GatewayDeps } from "../../deps.ts";

// One page of an account's outbox messages of one queue, newest first, with their attempts: the listings of what a
// connector sent (workflow executions, conversion events) share the query and the paging; each maps the rows itself.

/** `?limit&cursor&status`: pass the answer's `next_cursor` back as `cursor`. */
export const OutboxListQuery = pageQuery({ limit: 20, max: 100, cursor: { ids: ["obx"] } }).extend({
  status: z.enum(OUTBOX_STATUSES).optional(),
});
export type OutboxListQuery = z.infer<typeof OutboxListQuery>;

export interface OutboxPage { rows: { message: OutboxMessage; attempts: OutboxAttemptRow[] }[]; next_cursor: string | null }

export async function outboxPage(deps: GatewayDeps, accountId: string, queue: string, query: OutboxListQuery): Promise<OutboxPage> {
  const messages = await listOutboxMessages(deps.db, { accountId, queue, status: query.status, cursor: query.cursor, take: query.limit + 1 });
  const page = messages.slice(0, query.limit);
  const attempts = page.length ? await outboxAttemptsOf(deps.db, page.map((m) => m.id)) : [];
  return {
    rows: page.map((message) => ({ message, attempts: attempts.filter((a) => a.messageId === message.id) })),
    next_cursor: messages.length > query.limit ? page[page.length - 1].id : null,
  };
}
