export * from "./connection.ts";
export * from "./retry-policy.ts";
export * from "./queues.ts";
export * from "./outbox.ts";
