import { snapAdsPeer } from "./snap-ads-peer.ts";
import { adsScenarios } from "./suite.ts";

// The ads scenario suite against the local Snap Marketing API (whole-object writes: each ad squad PUT replaces the
// whole ad squad, so the connector reads it, merges the plan's interests and sends every other field back as read).
// Snap has no dry run: plans need the caller's acknowledgement under strict_safety (the suite sends it).

adsScenarios(snapAdsPeer);
