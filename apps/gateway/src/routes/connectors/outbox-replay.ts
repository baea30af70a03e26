import { replayOutboxMessage, type Tx } from "@trendgate/db";
import { ApiError, notFound } from "../../http/api-error.ts";
import type { Reply } from "../../http/route.ts";
import type { GatewayDeps } from "../../deps.ts";

// Replay of an outbox message a connector sent (a workflow push, a conversion event), like a webhook execution's:
// a message that failed, or whose outcome is unknown (the peer may have acted: the user decides), is put back to
// pending and gets one more attempt now (same payload and event id, the attempt numbers go on). A pending message is
// 409 (it is still being sent); a succeeded or cancelled one is 409 too (nothing to repair).

export async function replayOutbox(
  deps: GatewayDeps, atomically: (work: (tx: Tx) => Promise<Reply>) => Promise<Reply>,
  m: { accountId: string; queue: string; messageId: string; shownId: string; what: string },
): Promise<Reply> {
  return atomically(async (tx) => {
    const r = await replayOutboxMessage(tx, m.accountId, m.queue, m.messageId);
    if ("status" in r) {
      if (r.status === "missing") throw notFound(m.what);
      throw new ApiError("conflict", r.status === "pending"
        ? `This ${m.what.toLowerCase()} is still pending (queued or waiting for a retry); replay it once it has failed`
        : `This ${m.what.toLowerCase()} is ${r.status}: only failed ones (or ones whose outcome is unknown) can be replayed`);
    }
    return { status: 202, body: { id: m.shownId, status: "queued" as const, attempt: r.row.attempts + 1 }, outbox: [r.row] };
  });
}
