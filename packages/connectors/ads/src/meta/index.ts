import type { AdsConnector } from "../kind.ts";
import { MetaAdsClient } from "./client.ts";
import { manifest } from "./manifest.ts";
import { metaAdsReporting } from "./report.ts";

export const metaAds: AdsConnector = {
  manifest,
  // No sandbox: Meta's test ad accounts were not verified; validate_only is the dry run.
  capabilities: { dryRun: true, audienceEstimate: true, sandbox: false, targeting: ["interests"], writes: "whole_spec" },
  itemLookup: { interests: "Meta's interest search (/search?type=adinterest)" },
  client: (ctx) => new MetaAdsClient(ctx),
  reporting: metaAdsReporting,
};
