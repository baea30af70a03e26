export * from "./types.ts";
export * from "./kind.ts";
// The providers (one folder each); the registry (@trendgate/connectors) lists them.
export { x } from "./x/index.ts";
export { reddit } from "./reddit/index.ts";
export { youtube } from "./youtube/index.ts";
export { googleTrends } from "./google-trends/index.ts";
// Clients, for tests and tools that call a provider directly.
export * from "./x/client.ts";
export * from "./reddit/client.ts";
export * from "./youtube/client.ts";
export * from "./youtube/quota.ts";
export { nextPacificMidnight, pacificDay } from "./youtube/pacific-day.ts";
export * from "./google-trends/client.ts";
export * from "./google-trends/momentum.ts";
