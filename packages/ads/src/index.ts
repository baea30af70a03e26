// The ads plan engine and its services: guardrails (strict_safety), the state hashes that make a plan refuse to
// apply to changed targets, the preview, rollback and apply of plans (routes call these), the record of a run's
// end, and the signing of executor plans. Provider specifics live in packages/connectors/ads.
export * from "./guardrails.ts";
export * from "./plan-hash.ts";
export * from "./executor-signing.ts";
export * from "./plan.ts";
export * from "./reconcile.ts";
export * from "./run-record.ts";
export * from "./read-targets.ts";
export * from "./ad-account.ts";
export * from "./mapping-check.ts";
export * from "./errors.ts";
export * from "./plan-view.ts";
export * from "./dry-run.ts";
export * from "./preview.ts";
export * from "./rollback.ts";
export * from "./apply.ts";
export * from "./executor-plan.ts";
export * from "./executor-results.ts";
export * from "./approval.ts";
