export * from "./detection/index.ts";
