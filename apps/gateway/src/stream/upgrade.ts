import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { CategoryPath, ERROR_CODES, problemType, type Problem } from "@trendgate/contracts";
import { ApiError } from "../http/api-error.ts";
import { STREAM_ID } from "./ids.ts";

export const STREAM_PATH = "/api/stream";

export interface StreamQuery {
  category: string | null;
  lastEventId: string | null;
}

/**
 * The credentials of an upgrade request, as an Authorization header value. `Authorization: Bearer` wins; browsers
 * cannot set headers on a WebSocket, so `?access_token=` is accepted too (it may end up in proxy logs: see docs/api.md › Trend stream).
 */
export function upgradeAuthorization(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers.authorization;
  if (header) return header;
  const token = url.searchParams.get("access_token");
  return token ? `Bearer ${token}` : undefined;
}

/** Validates `category` and `last_event_id`; throws a 422 ApiError naming each bad parameter. */
export function parseStreamQuery(url: URL): StreamQuery {
  const category = url.searchParams.get("category");
  const lastEventId = url.searchParams.get("last_event_id");
  const errors: { location: "query"; path: string; message: string; code: string }[] = [];
  if (category !== null && !CategoryPath.safeParse(category).success) {
    errors.push({ location: "query", path: "category", message: "Must be a category path such as tech or tech/ai", code: "invalid_format" });
  }
  if (lastEventId !== null && !STREAM_ID.test(lastEventId)) {
    errors.push({ location: "query", path: "last_event_id", message: "Must be the `id` of a message received from this stream", code: "invalid_format" });
  }
  if (errors.length) throw new ApiError("validation_failed", `${errors.length} field(s) failed validation`, { errors });
  return { category: category || null, lastEventId: lastEventId || null };
}

/** Answers an upgrade request with an HTTP problem response (the connection is not upgraded) and closes it. */
export function rejectUpgrade(socket: Duplex, req: IncomingMessage, e: ApiError, requestId: string) {
  if (!socket.writable) return socket.destroy();
  const body: Problem = {
    type: problemType(e.code),
    title: ERROR_CODES[e.code].title,
    status: e.status,
    detail: e.detail,
    instance: (req.url ?? "").split("?")[0],
    code: e.code,
    request_id: requestId,
    ...(e.extra.errors ? { errors: e.extra.errors as Problem["errors"] } : {}),
  };
  const json = JSON.stringify(body);
  const headers: Record<string, string | string[]> = {
    "Content-Type": "application/problem+json",
    "Content-Length": String(Buffer.byteLength(json)),
    "X-Request-Id": requestId,
    Connection: "close",
    ...(e.status === 503 ? { "Retry-After": "5" } : {}),
    ...e.extra.headers,
  };
  const head = [`HTTP/1.1 ${e.status} ${httpReason(e.status)}`, ...Object.entries(headers).flatMap(([k, v]) => [v].flat().map((x) => `${k}: ${x}`))].join("\r\n");
  socket.end(`${head}\r\n\r\n${json}`);
  socket.once("finish", () => socket.destroy());
}

const httpReason = (status: number) =>
  ({ 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable" })[status] ?? "Error";
