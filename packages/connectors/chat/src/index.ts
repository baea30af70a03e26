export * from "./kind.ts";
export { slack } from "./slack/index.ts";
