import { googleAdsPeer } from "./google-ads-peer.ts";
import { adsScenarios } from "./suite.ts";

// The ads scenario suite against the local Google Ads API (per-item writes: adGroupCriteria:mutate with partialFailure).

adsScenarios(googleAdsPeer);
