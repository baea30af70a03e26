export * from "./client.ts";
export * from "./ids.ts";
export * from "./errors.ts";
export * from "./accounts.ts";
export * from "./api-keys.ts";
export * from "./signals.ts";
export { Prisma } from "./generated/client.ts";
