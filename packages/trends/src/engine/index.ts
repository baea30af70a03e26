export * from "./detect-account.ts";
export * from "./narrative.ts";
