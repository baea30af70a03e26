import type { WorkflowConnector } from "../kind.ts";
import { N8nClient } from "./client.ts";
import { manifest } from "./manifest.ts";

export const n8n: WorkflowConnector = {
  manifest,
  client: (ctx) => new N8nClient(ctx),
};

export { N8nConnectBody, N8nSelectionBody, type N8nSelection } from "./schemas.ts";
export { instanceBase, productionUrl, pushTriggerOf } from "./client.ts";
