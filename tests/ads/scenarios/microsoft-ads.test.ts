import { microsoftAdsPeer } from "./microsoft-ads-peer.ts";
import { adsScenarios } from "./suite.ts";

// The ads scenario suite against the local Microsoft Advertising REST API (per-item writes: AddKeywords /
// DeleteKeywords per ad group, PartialErrors per keyword; no provider dry run, so the connector's own checks run at
// preview and strict_safety asks for the plan's acknowledgement). CallRateExceeded carries no wait: the connector
// waits MICROSOFT_ADS_THROTTLE_WAIT_SECONDS (Microsoft says 60 s; 1 s here).

adsScenarios(microsoftAdsPeer);
