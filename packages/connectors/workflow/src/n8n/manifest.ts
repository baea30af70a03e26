import type { ProviderManifest } from "@trendgate/connector-core";
import { N8nConnectBody, N8nSelectionBody } from "./schemas.ts";

// n8n as the workflow provider. The user gives the instance's address and
// an API key (X-N8N-API-KEY); there is no browser flow. The public API has no "execute workflow" endpoint: pushes go
// to the production URL of the workflow's Webhook trigger node, which only answers while the workflow is active.
export const manifest: ProviderManifest<"workflow"> = {
  id: "n8n",
  displayName: "n8n",
  kind: "workflow",
  operationName: "Workflow",
  auth: { mode: "credentials" },
  // Each user brings their own instance: the connection's api_base_url is used, this default only documents the shape.
  baseUrl: { default: "https://example.app.n8n.cloud/", env: "N8N_API_URL" },
  rateLimit: { retryAfterHeader: "retry-after" },
  // The public API's one version (/api/v1, client.ts); n8n publishes no sunset, and it is the user's instance.
  apiVersion: { default: "v1", pattern: /^v\d+$/, sunset: null, source: "https://docs.n8n.io/api/" },
  schemas: { connection: N8nConnectBody, selection: N8nSelectionBody },
  connectHint: "Connect with the API: POST {base_path}/connect with the instance's URL and an API key (n8n: Settings › n8n API).",
};
