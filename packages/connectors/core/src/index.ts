export { ProviderError, type ProviderErrorKind } from "@trendgate/delivery"; // the failure vocabulary lives with the delivery engine
export * from "./manifest.ts";
export * from "./api-version.ts";
export * from "./tokens.ts";
export * from "./provider-config.ts";
export * from "./oauth/index.ts";
export * from "./http/index.ts";
