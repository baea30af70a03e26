export * from "./provider-http.ts";
export * from "./rate-limit.ts";
