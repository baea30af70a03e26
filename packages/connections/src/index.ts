export * from "./connections.ts";
export * from "./errors.ts";
export type { ConnectionsDeps } from "./context.ts";
export type { ProviderLookup } from "./providers.ts";
export { checkReturnUrl, type CallbackOutcome, type CallbackQuery } from "./authorize.ts";
export { refreshBackoffMs } from "./token-keeper.ts";
export { callbackAnswer, escapeHtml, type CallbackAnswer } from "./callback-page.ts";
