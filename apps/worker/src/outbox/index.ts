// The shared outbox's worker side: handlers for each outbox queue build on outboxProcessor.
export { outboxProcessor, OUTBOX_RETRY_JITTER, OUTBOX_MAX_RETRY_AFTER_SECONDS, type OutboxHandler, type OutboxContext, type OutboxMessageOf, type FinalOutcome, type SendOutcome } from "./processor.ts";
export { DeferError, deferJob, HandedOffError } from "./defer.ts";
export { AttemptFailedError } from "./attempt-failed.ts";
export { InvalidPayloadError } from "./invalid-payload.ts";
export { judgeFailure, type FailureVerdict } from "./verdict.ts";
export { outboxSweepSource } from "./sweep-source.ts";
