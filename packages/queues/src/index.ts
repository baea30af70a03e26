export * from "./connection.ts";
export * from "./job-options.ts";
export * from "./queues.ts";
export * from "./outbox.ts";
export * from "./lock.ts";
