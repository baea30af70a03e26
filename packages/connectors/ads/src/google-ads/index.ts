import type { AdsConnector } from "../kind.ts";
import { GoogleAdsClient } from "./client.ts";
import { manifest } from "./manifest.ts";
import { googleAdsReporting } from "./report.ts";

export const googleAds: AdsConnector = {
  manifest,
  capabilities: { dryRun: true, audienceEstimate: false, sandbox: true, targeting: ["keywords"], writes: "per_item" },
  client: (ctx) => new GoogleAdsClient(ctx),
  reporting: googleAdsReporting,
};
