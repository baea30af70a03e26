export * from "./state-machine.ts";
export * from "./settings.ts";
export * from "./messages.ts";
export * from "./apply.ts";
export * from "./intake.ts";
export * from "./tick.ts";
export * from "./card.ts";
export * from "./review.ts";
