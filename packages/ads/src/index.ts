// The ads plan engine (issue 11): guardrails (strict_safety), the state hashes that make a plan refuse to apply
// to changed targets, and the signing of executor plans. Provider specifics live in packages/connectors/ads.
export * from "./guardrails.ts";
export * from "./plan-hash.ts";
export * from "./executor-signing.ts";
export * from "./plan.ts";
export * from "./reconcile.ts";
export * from "./run-record.ts";
export * from "./read-targets.ts";
export * from "./ad-account.ts";
export * from "./mapping-check.ts";
