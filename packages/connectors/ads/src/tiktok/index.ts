import type { AdsConnector } from "../kind.ts";
import { TikTokAdsClient } from "./client.ts";
import { manifest } from "./manifest.ts";
import { tiktokAdsReporting } from "./report.ts";

export const tiktokAds: AdsConnector = {
  manifest,
  reporting: tiktokAdsReporting,
  // No dry run (TikTok has no validate-only flag: the preview runs the connector's own checks) and no audience
  // estimate we could confirm; a sandbox base URL exists (sandbox-ads.tiktok.com, sandbox tokens only).
  capabilities: { dryRun: false, audienceEstimate: false, sandbox: true, targeting: ["interests"], writes: "whole_spec" },
  itemLookup: { interests: "TikTok's interest keyword recommendations and its interest categories" },
  client: (ctx) => new TikTokAdsClient(ctx),
};
