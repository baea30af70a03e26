export * from "./detection/index.ts";
export * from "./events/publish.ts";
export * from "./events/mutes.ts";
export * from "./engine/index.ts";
export * from "./briefing/index.ts";
export * from "./recommendations/index.ts";
export * from "./backtest/anomalous-at.ts";
export * from "./calendar/holidays.ts";
