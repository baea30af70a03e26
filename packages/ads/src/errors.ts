import type { ErrorCode, FieldError } from "@trendgate/contracts";

/** A plan that may not be previewed, applied or rolled back as asked: the caller's problem, with its code and fields. */
export class AdsPlanError extends Error {
  constructor(readonly code: ErrorCode, message: string, readonly errors?: FieldError[]) {
    super(message);
  }
}
