export * from "./link.ts";
export * from "./load.ts";
export * from "./render.ts";
