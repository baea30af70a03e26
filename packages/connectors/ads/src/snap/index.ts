import type { AdsConnector } from "../kind.ts";
import { SnapAdsClient } from "./client.ts";
import { manifest } from "./manifest.ts";
import { snapAdsReporting } from "./report.ts";

export const snapAds: AdsConnector = {
  manifest,
  // No dry run and no sandbox: the preview is the connector's own checks against Snap's
  // documented constraints and its interest lookup, so strict_safety asks the caller to acknowledge the plan. Snap
  // documents audience sizing, but its endpoint is unverified and the preview does not use it: not claimed.
  capabilities: { dryRun: false, audienceEstimate: false, sandbox: false, targeting: ["interests"], writes: "whole_spec" },
  itemLookup: { interests: "Snap's lifestyle categories" },
  client: (ctx) => new SnapAdsClient(ctx),
  reporting: snapAdsReporting,
};
