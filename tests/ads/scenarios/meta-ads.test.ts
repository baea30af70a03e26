import { metaAdsPeer } from "./meta-ads-peer.ts";
import { adsScenarios } from "./suite.ts";

// The ads scenario suite against the local Meta Marketing API (whole-spec writes: each ad set POST replaces its
// targeting, so the connector reads, merges the plan's change and writes the spec back).

adsScenarios(metaAdsPeer);
