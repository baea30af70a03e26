import type { AdsConnector } from "../kind.ts";
import { PinterestAdsClient } from "./client.ts";
import { manifest } from "./manifest.ts";
import { pinterestAdsReporting } from "./report.ts";

export const pinterestAds: AdsConnector = {
  manifest,
  // No dry run: the connector's own checks stand in. Pinterest sizes audiences for a targeting spec
  // (`POST /ad_accounts/{id}/ad_groups/audience_sizing` in its description) and has a sandbox base URL.
  // `writes` is whole_spec: interests are a read-merge-write of targeting_spec (keywords are per item).
  capabilities: { dryRun: false, audienceEstimate: true, sandbox: true, targeting: ["interests", "keywords"], writes: "whole_spec" },
  itemLookup: { interests: "the ad account's Pinterest interest catalogue" },
  client: (ctx) => new PinterestAdsClient(ctx),
  reporting: pinterestAdsReporting,
};
