import http from "node:http";
import { listenLocal, type StandInOptions } from "./listen.ts";

/**
 * A local stand-in for the Google Trends API (alpha) on 127.0.0.1, speaking the wire format the client assumes
 * (see packages/connectors/social/src/google-trends/client.ts): OAuth bearer auth, POST /v1alpha:fetchTimeSeries
 * returning a long-running operation, GET /v1alpha/operations/{id} until done, Google's JSON error body. Tests set
 * each term's points; the answer holds the points inside the requested timeRange.
 */

export interface FixturePoint { time: string; searchInterest: number; isPartial?: boolean }

export type TrendsFailure =
  | "unauthenticated" // 401 UNAUTHENTICATED
  | "permissionDenied" // 403 PERMISSION_DENIED (project not in the alpha)
  | "resourceExhausted" // 429 RESOURCE_EXHAUSTED
  | "unavailable" // 503 UNAVAILABLE
  | "operationInvalidArgument"; // 200, the polled operation finished with error code 3 (waits for a poll)

/** Which requests a failure may hit: any, only the POST that starts an operation, or only a poll. */
export type FailOn = "any" | "start" | "poll";

export interface RecordedRequest { method: string; path: string; headers: http.IncomingHttpHeaders; body: any }

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

const error = (code: number, status: string, reason: string, message: string, extra: object[] = []): Answer =>
  ({ status: code, body: { error: { code, message, status, errors: [{ message, domain: "global", reason }], details: extra } } });

const FAILURES: Record<Exclude<TrendsFailure, "operationInvalidArgument">, Answer> = {
  unauthenticated: error(401, "UNAUTHENTICATED", "unauthorized", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."),
  permissionDenied: error(403, "PERMISSION_DENIED", "forbidden", "The caller does not have permission"),
  resourceExhausted: error(429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute'."),
  unavailable: error(503, "UNAVAILABLE", "backendError", "The service is currently unavailable."),
};

const RESOLUTIONS = new Set(["DAY", "WEEK", "MONTH", "YEAR"]);

/**
 * `token`: an access token accepted as is. `oauth`: an OAuth client whose refresh token Google's token endpoint
 * (POST /token, form body, RFC 6749 section 6) exchanges for one-hour access tokens, which the API then accepts
 * until they expire; a wrong refresh token or client gets Google's 400 invalid_grant / 401 invalid_client.
 */
export async function startTrendsServer(opts: { token: string; oauth?: { clientId: string; clientSecret: string; refreshToken: string } } & Pick<StandInOptions, "port">) {
  const issued = new Map<string, number>(); // access token -> expiry (ms)
  const tokenRequests: Record<string, string>[] = [];
  function tokenEndpoint(raw: string): Answer {
    const form = Object.fromEntries(new URLSearchParams(raw));
    tokenRequests.push(form);
    if (!opts.oauth || form.client_id !== opts.oauth.clientId || form.client_secret !== opts.oauth.clientSecret) {
      return { status: 401, body: { error: "invalid_client", error_description: "The OAuth client was not found." } };
    }
    if (form.grant_type !== "refresh_token") return { status: 400, body: { error: "unsupported_grant_type", error_description: `Invalid grant_type: ${form.grant_type ?? ""}` } };
    if (form.refresh_token !== opts.oauth.refreshToken) return { status: 400, body: { error: "invalid_grant", error_description: "Token has been expired or revoked." } };
    const token = `ya29.${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
    issued.set(token, Date.now() + 3599_000);
    return { status: 200, body: { access_token: token, expires_in: 3599, scope: "https://www.googleapis.com/auth/searchtrends", token_type: "Bearer" } };
  }
  const accepted = (authorization: string | undefined) => {
    const t = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
    return t === opts.token || (!!t && (issued.get(t) ?? 0) > Date.now());
  };
  const series = new Map<string, FixturePoint[]>();
  const requests: RecordedRequest[] = [];
  const failures: { failure: TrendsFailure; on: FailOn; headers: Record<string, string>; details: object[] }[] = [];
  const operations = new Map<string, { polls: number; points: FixturePoint[] }>();
  let pollsUntilDone = 2;

  function fetchTimeSeries(body: any): Answer {
    const spec = body?.spec;
    const terms = spec?.expression?.terms;
    const start = Date.parse(spec?.timeRange?.startTime), end = Date.parse(spec?.timeRange?.endTime);
    if (!Array.isArray(terms) || terms.length !== 1 || typeof terms[0]?.value !== "string" || terms[0]?.type !== "BROAD") {
      return error(400, "INVALID_ARGUMENT", "badRequest", "spec.expression.terms: exactly one BROAD term is supported here");
    }
    if (Number.isNaN(start) || Number.isNaN(end) || start >= end) return error(400, "INVALID_ARGUMENT", "badRequest", "spec.timeRange: invalid");
    if (!RESOLUTIONS.has(spec.timeResolution)) return error(400, "INVALID_ARGUMENT", "badRequest", "spec.timeResolution: invalid");
    const points = (series.get(terms[0].value) ?? []).filter((p) => Date.parse(p.time) >= start && Date.parse(p.time) <= end);
    const name = `operations/ts-${operations.size + 1}-${Math.random().toString(36).slice(2, 8)}`;
    operations.set(name, { polls: 0, points });
    return { status: 200, body: { name, done: false } };
  }

  function operation(name: string, failWithError: boolean): Answer {
    const op = operations.get(name);
    if (!op) return error(404, "NOT_FOUND", "notFound", `Operation ${name} not found`);
    if (failWithError) return { status: 200, body: { name, done: true, error: { code: 3, message: "Term is too long" } } };
    if (++op.polls < pollsUntilDone) return { status: 200, body: { name, done: false } };
    const max = Math.max(1, ...op.points.map((p) => p.searchInterest));
    return {
      status: 200,
      body: {
        name, done: true,
        response: { points: op.points.map((p) => ({ time: p.time, searchInterest: p.searchInterest, scaledSearchInterest: Math.round((100 * p.searchInterest) / max), isPartial: p.isPartial ?? false })) },
      },
    };
  }

  function answer(method: string, path: string, headers: http.IncomingHttpHeaders, raw: string): Answer {
    if (method === "POST" && path === "/token") return tokenEndpoint(raw);
    let body: any = null;
    try { body = raw ? JSON.parse(raw) : null; } catch { /* recorded as null; answered below */ }
    requests.push({ method, path, headers, body });
    const kind = method === "GET" && path.startsWith("/v1alpha/operations/") ? "poll" : "start";
    const fail = failures[0] && (failures[0].on === "any" || failures[0].on === kind) ? failures.shift() : undefined;
    if (fail && fail.failure !== "operationInvalidArgument") {
      const a = FAILURES[fail.failure];
      const withDetails = { error: { ...(a.body as any).error, details: fail.details } };
      return { ...a, body: withDetails, headers: { ...a.headers, ...fail.headers } };
    }
    if (!accepted(headers.authorization)) {
      return { ...FAILURES.unauthenticated, headers: { "www-authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"' } };
    }
    if (method === "POST" && path === "/v1alpha:fetchTimeSeries") {
      if (body === null) return error(400, "INVALID_ARGUMENT", "parseError", "Invalid JSON payload received.");
      return fetchTimeSeries(body);
    }
    if (method === "GET" && path.startsWith("/v1alpha/operations/")) return operation(decodeURIComponent(path.slice("/v1alpha/".length)), fail?.failure === "operationInvalidArgument");
    return error(404, "NOT_FOUND", "notFound", `${method} ${path} not found`);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const a = answer(req.method ?? "GET", new URL(req.url ?? "/", "http://localhost").pathname, req.headers, Buffer.concat(chunks).toString("utf8"));
      res.writeHead(a.status, { "content-type": "application/json; charset=UTF-8", ...a.headers });
      res.end(JSON.stringify(a.body));
    });
  });
  const baseUrl = await listenLocal(server, opts.port);

  return {
    baseUrl,
    tokenUrl: `${baseUrl}/token`,
    tokenRequests,
    /** Expires every access token issued from the refresh token (as an hour passing would). */
    expireIssued() { for (const k of issued.keys()) issued.set(k, 0); },
    requests,
    on: (method: string, prefix: string) => requests.filter((r) => r.method === method && r.path.startsWith(prefix)),
    setSeries(term: string, points: FixturePoint[]) { series.set(term, points); },
    /** How many GETs an operation takes to finish (1: the first poll finds it done). */
    setPollsUntilDone(n: number) { pollsUntilDone = n; },
    /**
     * The next n requests (of the kind `on` names) fail this way; headers (Retry-After) and details (RetryInfo) are
     * added to the answer. Failures queue in order: a pending "poll" failure lets other requests through.
     */
    failNext(n: number, failure: TrendsFailure, extra: { on?: FailOn; headers?: Record<string, string>; details?: object[] } = {}) {
      const on = failure === "operationInvalidArgument" ? "poll" : extra.on ?? "any";
      for (let i = 0; i < n; i++) failures.push({ failure, on, headers: extra.headers ?? {}, details: extra.details ?? [] });
    },
    reset() { requests.length = 0; failures.length = 0; series.clear(); pollsUntilDone = 2; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
export type TrendsServer = Awaited<ReturnType<typeof startTrendsServer>>;
