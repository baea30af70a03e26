export * from "./provider-http.ts";
export * from "./rate-limit.ts";
export * from "./report-poller.ts";
