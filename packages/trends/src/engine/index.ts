export * from "./detect-account.ts";
export * from "./narrative.ts";
export * from "./decide.ts";
