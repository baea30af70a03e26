import type { AdsConnector } from "../kind.ts";
import { LinkedInAdsClient } from "./client.ts";
import { manifest } from "./manifest.ts";
import { linkedinAdsReporting } from "./report.ts";

export const linkedinAds: AdsConnector = {
  manifest,
  // No dry run (no validate-only write): previews are our own checks plus audienceCounts. Test ad accounts exist
  // (`"test": true` at creation; they never serve or bill), reached through the same base URL.
  capabilities: { dryRun: false, audienceEstimate: true, sandbox: true, targeting: ["interests"], writes: "whole_spec" },
  itemLookup: { interests: "LinkedIn's targeting typeahead (member interests, then skills)" },
  client: (ctx) => new LinkedInAdsClient(ctx),
  reporting: linkedinAdsReporting,
};
