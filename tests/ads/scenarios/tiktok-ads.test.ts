import { tikTokAdsPeer } from "./tiktok-ads-peer.ts";
import { adsScenarios } from "./suite.ts";

// The ads scenario suite against the local TikTok API for Business (whole-list writes: each /adgroup/update/ replaces
// the interest lists it sends, so the connector reads, merges the plan's change and writes the lists back). TikTok
// has no dry run: plans need acknowledging under strict_safety (the suite sends it), and a 40100 says nothing of how
// long to wait, so the retry schedule decides (minWaitMs 0).

adsScenarios(tikTokAdsPeer);
