export * from "./ssrf-guard.ts";
export * from "./http-client.ts";
export * from "./signing.ts";
export * from "./classify.ts";
export * from "./destination-limiter.ts";
export * from "./batch-writer.ts";
