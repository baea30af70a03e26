import type { AdsConnector } from "../kind.ts";
import { MicrosoftAdsClient } from "./client.ts";
import { manifest } from "./manifest.ts";
import { microsoftAdsReporting } from "./report.ts";

export const microsoftAds: AdsConnector = {
  manifest,
  // No validate-only mode: the dry run is the connector's own checks (checks.ts). Microsoft has a sandbox environment
  // (its own API host and sign-in), reachable by pointing MICROSOFT_ADS_API_URL and the OAuth URLs at it.
  capabilities: { dryRun: false, audienceEstimate: false, sandbox: true, targeting: ["keywords"], writes: "per_item" },
  client: (ctx) => new MicrosoftAdsClient(ctx),
  reporting: microsoftAdsReporting,
};
