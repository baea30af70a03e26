import type { WorkflowPushPayload, WorkflowPushSent } from "@trendgate/contracts";
import { signDelivery } from "@trendgate/delivery";

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
  const sent: WorkflowPushSent = {
    event: p.event,
    data: p.data,
    ...(opts.includeMetadata
      ? { metadata: { event_id: p.event_id, account_id: opts.accountId, sent_at: opts.sentAt.toISOString(), ...(p.trend_id ? { trend_id: p.trend_id } : {}) } }
      : {}),
  };
  return JSON.stringify(sent);
}

/** What a workflow connection stores besides its sealed key. */
export interface WorkflowConnectionSettings {
  include_metadata: boolean;
}

/** The credential a Webhook node with authentication expects (its header, or HTTP Basic). */
export type PushAuth = { type: "header"; name: string; value: string } | { type: "basic"; username: string; password: string };

/** The sealed part of a workflow connection. */
export interface WorkflowCredentials {
  api_key: string;
  /** Signs every push (Standard Webhooks, as webhook deliveries are); absent on connections made before pushes were signed. */
  signing_secret?: string;
  push_auth?: PushAuth | null;
}

/** What a push's credential shows: its kind and header name or user name, never the secret part. */
export const pushAuthShown = (a: PushAuth | null | undefined) =>
  !a ? null : a.type === "header" ? { type: a.type, name: a.name } : { type: a.type, username: a.username };

/**
 * A push's headers: our event id, the Standard Webhooks signature of the body (webhook-id = the event id, so a retry
 * is recognisably the same push) and the Webhook node's own credential when it asks for one.
 */
export function pushHeaders(creds: WorkflowCredentials, eventId: string, body: string, now = new Date()): Record<string, string> {
  const auth = creds.push_auth;
  return {
    [EVENT_ID_HEADER]: eventId,
    ...(creds.signing_secret ? signDelivery([creds.signing_secret], eventId, Math.floor(now.getTime() / 1000), body) : {}),
    ...(auth?.type === "header" ? { [auth.name]: auth.value } : {}),
    ...(auth?.type === "basic" ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}` } : {}),
  };
}
