export * from "./kind.ts";
export * from "./payload.ts";
export { n8n, instanceBase, productionUrl, pushTriggerOf } from "./n8n/index.ts";
