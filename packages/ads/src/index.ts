// The ads plan engine (issue 11): guardrails (strict_safety) and the state hashes that make a plan refuse to apply
// to changed targets. Provider specifics live in packages/connectors/ads.
export * from "./guardrails.ts";
export * from "./plan-hash.ts";
