import { z } from "zod";

// Stable, machine-readable error codes. Clients switch on `code`; `title`/`detail` are for humans and may change.
export const ERROR_CODES = {
  unauthorized: { status: 401, title: "Authentication failed" },
  api_key_required: { status: 403, title: "Only an API key may do this, not a console session" },
  forbidden: { status: 403, title: "Authenticated, but not allowed to do this" },
  not_found: { status: 404, title: "Resource not found" },
  route_not_found: { status: 404, title: "No such route" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  malformed_json: { status: 400, title: "Request body is not valid JSON" },
  bad_request: { status: 400, title: "Bad request" },
  invalid_idempotency_key: { status: 400, title: "Invalid Idempotency-Key header" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  payload_too_large: { status: 413, title: "Request body too large" },
  headers_too_large: { status: 431, title: "Request header fields too large" },
  request_timeout: { status: 408, title: "Request timed out" },
  validation_failed: { status: 422, title: "Request failed validation" },
  idempotency_key_reused: { status: 422, title: "Idempotency-Key reused with a different request" },
  idempotency_request_in_progress: { status: 409, title: "A request with this Idempotency-Key is still in progress" },
  conflict: { status: 409, title: "Conflict" },
  api_key_limit_reached: { status: 409, title: "The account has as many active API keys as it may" },
  ad_account_required: { status: 422, title: "Choose the ad account: the connection does not reach exactly one" },
  acknowledgement_required: { status: 422, title: "The plan must be acknowledged before it is applied" },
  version_conflict: { status: 409, title: "The item changed since you read it" },
  invalid_transition: { status: 422, title: "Action not allowed in the item's current state" },
  not_connected: { status: 409, title: "The connector is not connected" },
  nothing_mapped: { status: 409, title: "Nothing is mapped for this provider" },
  bot_not_in_channel: { status: 422, title: "The app's bot is not in this channel" },
  provider_credentials_rejected: { status: 422, title: "The provider refused the credentials" },
  provider_unreachable: { status: 422, title: "The provider could not be reached at the given address" },
  not_a_provider_api: { status: 422, title: "The address does not answer as the provider's API" },
  provider_error: { status: 502, title: "The provider refused or failed the request" },
  link_expired: { status: 410, title: "The link has expired" },
  rate_limited: { status: 429, title: "Rate limit exceeded" },
  too_many_connections: { status: 429, title: "Too many open stream connections for this account or API key" },
  too_many_backtests: { status: 429, title: "Too many backtests running for this account" },
  service_unavailable: { status: 503, title: "Service unavailable" },
  provider_not_configured: { status: 501, title: "Provider not configured on this server" },
  internal_error: { status: 500, title: "Internal server error" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const FieldError = z
  .object({
    location: z.enum(["body", "query", "path", "header"]),
    path: z.string().meta({ description: "Dotted path of the offending field, e.g. `signals.3.count`", example: "url" }),
    message: z.string(),
    code: z.string().meta({ description: "zod issue code, e.g. `invalid_type`, `too_big`" }),
  })
  .meta({ id: "FieldError" });

// RFC 9457 problem details, served as application/problem+json.
export const Problem = z
  .object({
    type: z.string().meta({ description: "URI identifying the problem type", example: "https://trendgate.dev/problems/validation_failed" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional().meta({ description: "The request path" }),
    code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
    request_id: z.string(),
    errors: z.array(FieldError).optional().meta({ description: "Present for validation failures" }),
  })
  .meta({ id: "Problem" });

export type Problem = z.infer<typeof Problem>;
export type FieldError = z.infer<typeof FieldError>;
export const problemType = (code: ErrorCode) => `https://trendgate.dev/problems/${code}`;
