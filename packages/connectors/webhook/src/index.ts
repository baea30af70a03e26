export * from "./triggers.ts";
export * from "./payload.ts";
export * from "./sender.ts";
export * from "./jobs.ts";
export * from "./templates.ts";
export * from "./backtest.ts";
