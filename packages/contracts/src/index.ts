export * from "./errors.ts";
export * from "./common.ts";
export * from "./keys.ts";
export * from "./signals.ts";
export * from "./status.ts";
export * from "./trend-events.ts";
export * from "./webhooks.ts";
export * from "./queues.ts";
