import type { ProviderManifest } from "@trendgate/connector-core";
import type { OutboundResult } from "@trendgate/delivery";

// The workflow-automation connector kind: check an instance's API key, list its workflows, read one, and push a
// payload to a workflow's trigger URL. A provider (packages/connectors/workflow/src/<provider>/) implements
// WorkflowConnector; every failure is a ProviderError (@trendgate/connector-core) with the provider's code in
// `detail.providerCode` (e.g. `not_n8n_api`, `webhook_not_registered`).

/** A workflow's trigger that accepts pushes over HTTP. */
export interface PushTrigger {
  /** The trigger node's name in the workflow. */
  nodeName: string;
  /** The HTTP method the trigger listens to (POST unless the node says otherwise). */
  method: string;
  /** The trigger's path as configured in the node. */
  path: string;
  /** The production URL derived from the instance's origin (the user may override it, e.g. behind a proxy). */
  url: string;
  /** What the trigger itself asks of a caller: nothing, a header, HTTP Basic, or a JWT (which we cannot send). */
  authentication: TriggerAuthentication;
}

export type TriggerAuthentication = "none" | "header" | "basic" | "jwt";

export interface Workflow {
  id: string;
  name: string;
  active: boolean;
  tags: string[];
  /** The first trigger that can receive pushes, or null (then the workflow cannot be selected). */
  trigger: PushTrigger | null;
}

export interface PushResult {
  status: number;
}

/** What the provider's own record of runs says about some of our pushes (WorkflowClient.findRuns). */
export interface WorkflowRuns {
  /** The pushes (by event id) a run of the workflow received, with the provider's id of that run. */
  ran: Map<string, string>;
  /** How far back the record was read: a push made before this and not in `ran` was not looked for. */
  checkedSince: Date;
}

export interface WorkflowClient {
  /** One real call with the key; resolves when the instance answers as the provider's API and accepts the key. */
  verify(): Promise<void>;
  /** One page of workflows, in the provider's cursor order. */
  listWorkflows(p: { cursor?: string; limit: number }): Promise<{ workflows: Workflow[]; nextCursor: string | null }>;
  getWorkflow(id: string): Promise<Workflow>;
  /** POSTs (or sends with `method`) a JSON body to a trigger URL; failures are ProviderErrors saying whether to retry. */
  push(url: string, body: string, headers: Record<string, string>, method?: string): Promise<PushResult>;
  /**
   * Which of these pushes to the workflow (made since `since`) it ran, from the provider's own record of runs. A 2xx
   * only says the trigger took the request (n8n answers 200 while it cannot run anything, and loses runs it took when
   * it stops); this is the confirmation. Absent when the provider keeps no such record.
   */
  findRuns?(workflowId: string, eventIds: ReadonlySet<string>, since: Date): Promise<WorkflowRuns>;
}

export interface WorkflowClientContext {
  /** The instance's base URL as the user gave it (e.g. https://acme.app.n8n.cloud). */
  baseUrl: string;
  apiKey: string;
  /** The shared guarded outbound client (SSRF guard on every connection, timeouts, bounded responses). */
  request(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", url: string, init?: { body?: string; headers?: Record<string, string> }): Promise<OutboundResult>;
}

export interface WorkflowConnector {
  manifest: ProviderManifest<"workflow">;
  client(ctx: WorkflowClientContext): WorkflowClient;
}
