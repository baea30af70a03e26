export * from "./client.ts";
export * from "./errors.ts";
export { tokenSetOf } from "./tokens.ts";
