// The shared outbox's worker side: handlers for each outbox queue build on outboxProcessor.
export { outboxProcessor, type OutboxHandler, type OutboxContext, type OutboxMessageOf, type FinalOutcome, type SendOutcome } from "./processor.ts";
export { DeferError, deferJob, HandedOffError } from "./defer.ts";
export { AttemptFailedError } from "./attempt-failed.ts";
export { InvalidPayloadError } from "./invalid-payload.ts";
export { decide, judgeFailure, outboxFailure, webhookFailure, type Failure, type FailureVerdict, type RetryVerdict } from "./verdict.ts";
export { outboxSweepSource } from "./sweep-source.ts";
