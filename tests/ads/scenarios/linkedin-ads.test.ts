import { linkedInAdsPeer } from "./linkedin-ads-peer.ts";
import { adsScenarios } from "./suite.ts";

// The ads scenario suite against the local LinkedIn Marketing API: whole-criteria writes (a PARTIAL_UPDATE `$set`
// replaces a campaign's targetingCriteria, so the connector reads, merges the plan's change and writes it back), no
// provider dry run (the preview is the connector's checks plus audienceCounts, and strict_safety asks for the plan
// to be acknowledged), and 429s with no wait hint (the retry schedule decides the wait).

adsScenarios(linkedInAdsPeer);
