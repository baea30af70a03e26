export * from "./errors.ts";
export * from "./manifest.ts";
export * from "./api-version.ts";
export * from "./tokens.ts";
export * from "./provider-config.ts";
export * from "./oauth/index.ts";
export * from "./http/index.ts";
