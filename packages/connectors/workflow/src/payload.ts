import type { WorkflowPushPayload } from "@trendgate/contracts";

// The body a workflow push sends (its outbox payload, WorkflowPushPayload, is in @trendgate/contracts), and how a new
// push is bound to the workflow selected when it is made.

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
