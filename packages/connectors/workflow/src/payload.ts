import { z } from "zod";

// What a workflow push carries through the shared outbox (QUEUES.workflowPushes), and the body the workflow gets.
// A push is bound to the workflow selected when it was made (`workflow_id`, `push_url`, `push_method`): a retry goes
// there even if another workflow is selected meanwhile; while that workflow is still the selected one, its current
// URL (a new override, a followed webhook path) is used. include_metadata is read when the push is sent.

export const WorkflowPushPayload = z.object({
  /** Our event id: sent as X-Trendgate-Event-Id (and in metadata) so the workflow can drop duplicates. */
  event_id: z.string(),
  event: z.string(),
  data: z.record(z.string(), z.unknown()),
  /** The trend a trend-event push is about. */
  trend_id: z.string().optional(),
  /** `api` (POST …/push) or `trend_event` (automatic). */
  source: z.enum(["api", "trend_event"]),
  /** The workflow the push is for, and its trigger then (absent on pushes queued before pushes were bound). */
  workflow_id: z.string().optional(),
  push_url: z.string().optional(),
  push_method: z.string().optional(),
  /** push_url was the user's override (then a changed webhook path in n8n is not followed). */
  push_url_overridden: z.boolean().optional(),
});
export type WorkflowPushPayload = z.infer<typeof WorkflowPushPayload>;

/** The part of a new push that binds it to the selected workflow (see WorkflowPushPayload). */
export function bindPush(sel: { workflow_id?: string; push_url?: string; push_method?: string; push_url_overridden?: boolean }) {
  return {
    ...(sel.workflow_id ? { workflow_id: sel.workflow_id } : {}), ...(sel.push_url ? { push_url: sel.push_url } : {}),
    ...(sel.push_method ? { push_method: sel.push_method } : {}), push_url_overridden: sel.push_url_overridden === true,
  };
}

/** The header carrying our event id on every push. */
export const EVENT_ID_HEADER = "X-Trendgate-Event-Id";

/** The JSON the workflow's trigger receives. */
export function pushBody(p: WorkflowPushPayload, opts: { includeMetadata: boolean; accountId: string; sentAt: Date }): string {
  return JSON.stringify({
    event: p.event,
    data: p.data,
    ...(opts.includeMetadata
      ? { metadata: { event_id: p.event_id, account_id: opts.accountId, sent_at: opts.sentAt.toISOString(), ...(p.trend_id ? { trend_id: p.trend_id } : {}) } }
      : {}),
  });
}

/** What a workflow connection stores besides its sealed key. */
export interface WorkflowConnectionSettings {
  include_metadata: boolean;
}

/** The sealed part of a workflow connection. */
export interface WorkflowCredentials {
  api_key: string;
}
