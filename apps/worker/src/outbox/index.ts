// The shared outbox's worker side: handlers for each outbox queue build on outboxProcessor.
export { outboxProcessor, type OutboxHandler, type OutboxContext, type OutboxMessageOf, type FinalOutcome, type SendOutcome } from "./processor.ts";
export { outboxSweepSource } from "./sweep-source.ts";
