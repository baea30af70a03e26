export * from "./types.ts";
export * from "./x/client.ts";
export * from "./reddit/client.ts";
export * from "./youtube/client.ts";
export * from "./youtube/quota.ts";
export { nextPacificMidnight, pacificDay } from "./youtube/pacific-day.ts";
export * from "./google-trends/client.ts";
export * from "./google-trends/momentum.ts";
