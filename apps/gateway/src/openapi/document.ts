import { createDocument, type ZodOpenApiOperationObject } from "zod-openapi";
import { z } from "zod";
import { Problem } from "@trendgate/contracts";
import type { RouteDef } from "../http/route.ts";
import { TAG_DOCS } from "./tag-docs.ts";
import { webhookDocs } from "./webhooks.ts";

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: Problem } } });
const intHeader = (description: string) => ({ description, schema: { type: "integer" as const } });
const RATE_HEADERS = {
  "X-RateLimit-Limit": intHeader("Requests allowed in the window (the account's quota, shared by all its keys)"),
  "X-RateLimit-Remaining": intHeader("Requests the account has left in the window"),
  "X-RateLimit-Reset": intHeader("When the window resets (epoch seconds)"),
};

/** The OpenAPI 3.1 document, generated from the same route definitions (and zod schemas) the gateway runs. */
export function buildOpenApiDocument(routes: RouteDef[]) {
  const paths: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  for (const r of routes) {
    const responses: Record<string, any> = {};
    for (const [status, spec] of Object.entries(r.responses)) {
      const type = r.raw && status === "200" && !spec.schema ? "text/plain" : "application/json";
      responses[status] = {
        description: spec.description,
        ...(spec.content ? { content: Object.fromEntries(Object.entries(spec.content).map(([t, schema]) => [t, { schema }])) }
          : spec.schema ? { content: { [type]: { schema: spec.schema } } } : {}),
        ...(r.auth === "apiKey" ? { headers: RATE_HEADERS } : {}),
      };
    }
    if (r.auth === "apiKey") responses["401"] = problem("Missing, malformed, unknown, revoked or expired credential (WWW-Authenticate: Bearer)");
    if (r.keyOnly) responses["403"] = problem("`api_key_required`: a web console session cannot call this; use an API key");
    if (r.auth === "admin") responses["401"] = problem("Missing or wrong admin token (two WWW-Authenticate lines: Basic, then Bearer)");
    if (r.auth === "admin") responses["429"] = { ...problem("More than AUTH_FAILURES_PER_MINUTE failed authentications from this address (API keys and admin token together); retry after Retry-After seconds"), headers: { "Retry-After": intHeader("Seconds to wait") } };
    if (r.auth === "apiKey") responses["429"] = { ...problem([r.responses[429]?.description, "The account's quota exceeded (all its keys together), or more than AUTH_FAILURES_PER_MINUTE failed authentications from this address; retry after Retry-After seconds"].filter(Boolean).join("; or: ")), headers: { ...RATE_HEADERS, "Retry-After": intHeader("Seconds to wait") } };
    if (r.params && !r.responses[404]?.content) responses["404"] = problem("No such resource in your account, or a path id that cannot name one (`errors[]` names the segment)");
    if (r.params) responses["400"] = problem("Malformed percent-encoding in the path (`bad_request`)");
    if (r.body) {
      responses["400"] = problem("Malformed JSON (`malformed_json`), bad Idempotency-Key (`invalid_idempotency_key`) or malformed percent-encoding in the path (`bad_request`)");
      responses["413"] = problem("Body larger than the limit (`payload_too_large`), answered from Content-Length before the body is read");
      responses["415"] = problem("Body is not application/json (`unsupported_media_type`)");
    }
    if (r.body || r.query || r.params) responses["422"] = problem("Validation failed (`validation_failed`, with `errors[]` naming each field)");
    if (r.idempotent) responses["409"] = problem([r.responses[409]?.description, "A request with the same Idempotency-Key is still running"].filter(Boolean).join("; or: "));
    responses["408"] = problem("Headers or body not received in time (`request_timeout`); the connection is closed");
    responses["431"] = problem("Request headers too large (`headers_too_large`)");
    if (r.auth !== "public" || r.path === "/status") responses["503"] = problem("Postgres or Redis unavailable; retry with backoff (Retry-After)");

    const header = r.idempotent
      ? z.object({
          "Idempotency-Key": z.string().min(1).max(255).optional().meta({
            description: "Retrying with the same key and body returns the first response (Idempotent-Replayed: true) for 24 h; a different body is refused (422 idempotency_key_reused)." +
              (r.idempotent === "transactional" ? " The answer is recorded in the same transaction as the writes, so a retry after a lost response never runs twice." : ""),
          }),
        })
      : undefined;
    const op: ZodOpenApiOperationObject = {
      operationId: r.operationId,
      summary: r.summary,
      description: r.description,
      tags: [r.tag],
      security: r.auth === "apiKey" ? [{ bearerAuth: [] }] : r.auth === "admin" ? [{ adminToken: [] }] : [],
      requestParams: Object.fromEntries(Object.entries({ path: r.params, query: r.query, header }).filter(([, v]) => v)),
      ...(r.body ? { requestBody: { required: true, content: { "application/json": { schema: r.body } } } } : {}),
      responses,
    };
    (paths[r.path] ??= {})[r.method] = op;
  }
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "Trendgate API",
      version: "0.1.0",
      description:
        "Detects trends and delivers them to the systems marketing and ops teams already use. Every error is an RFC 9457 " +
        "problem (`application/problem+json`) with a stable `code` and the `request_id`. Validation failures answer 422. " +
        "Trend events are also streamed over a WebSocket at `/api/stream` (Bearer key on the upgrade request; " +
        "`category` and `last_event_id` query parameters; messages `{id, event}`): see docs/api.md › Trend stream.",
    },
    servers: [{ url: "/" }],
    tags: TAG_DOCS,
    security: [{ bearerAuth: [] }],
    paths,
    webhooks: webhookDocs(),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http", scheme: "bearer",
          description: "`Authorization: Bearer <API_KEY>`; keys start with `tg_`. A web console session's access token (`tgcs_`) is accepted too, for its account, except where a route answers 403 `api_key_required`",
        },
        adminToken: { type: "http", scheme: "bearer", description: "The operator ADMIN_TOKEN (also accepted as Basic password)" },
      },
    },
  });
}
