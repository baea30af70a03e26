import { ERROR_CODES, type ErrorCode, type FieldError } from "@trendgate/contracts";

/** An error that becomes a problem-details response. Throw it anywhere in a request. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    // A header given as a list is sent as one line per value (e.g. two WWW-Authenticate challenges).
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string | string[]> } = {},
  ) {
    super(detail ?? ERROR_CODES[code].title);
    this.status = ERROR_CODES[code].status;
  }
}

export const notFound = (what: string) => new ApiError("not_found", `${what} not found`);
