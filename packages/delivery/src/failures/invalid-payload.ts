import type { z } from "zod";
import { INVALID_PAYLOAD } from "@trendgate/contracts";

/**
 * An outbox message whose payload does not match its queue's schema (written by hand, or by a producer out of step
 * with the contract): no attempt could change that, so the verdict fails it at once, error class `invalid_payload`.
 */
export class InvalidPayloadError extends Error {
  readonly code = INVALID_PAYLOAD;

  constructor(queue: string, error: z.ZodError) {
    const issues = error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "payload"}: ${i.message}`).join("; ");
    super(`not a ${queue} payload (${issues})`);
  }
}
