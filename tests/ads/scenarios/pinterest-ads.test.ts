import { pinterestAdsPeer, pinterestSpecViolations } from "./pinterest-ads-peer.ts";
import { adsScenarios } from "./suite.ts";

// The ads scenario suite against the local Pinterest API v5 (no dry run: the preview is the connector's own checks,
// and strict_safety asks for the plan's hash). Both ad groups are mapped by their interests: each write is a
// read-merge-write of the whole targeting_spec through the batch ad-group PATCH, with per-item exceptions. (Keywords,
// Pinterest's other targeting, are covered in tests/connectors/pinterest-ads.test.ts: the preview route merges every
// field's resolved items into one map keyed by trend name, so one plan cannot yet mix interests and keywords.) Every
// request and answer of the run is checked against Pinterest's published description.

adsScenarios(pinterestAdsPeer);

afterAll(() => expect(pinterestSpecViolations()).toEqual([]));
