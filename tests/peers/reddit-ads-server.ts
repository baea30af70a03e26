import crypto from "node:crypto";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";

// A stand-in for Reddit's OAuth endpoints and the Ads Conversions API v3, strict like the real ones:
// - GET /api/v1/authorize?client_id&response_type=code&state&redirect_uri&duration&scope: the user approves at once
//   and the browser is sent back to redirect_uri with `code` and `state`; with `consentPage: true` (the sandbox) the
//   shared consent page asks first.
// - POST /api/v1/access_token: HTTP Basic client auth, form body, grant_type authorization_code (code once, same
//   redirect_uri) or refresh_token; `duration=permanent` grants carry a refresh token. Errors `{error}` with 400/401.
// - POST /api/v3/pixels/{pixel_id}/conversion_events: Bearer auth (an OAuth token, or a conversion access token made
//   with addConversionToken); the body validated like the v3 API: `data.events` 1..1000, `event_at` in ms within
//   7 days back and 5 minutes ahead, UPPER_SNAKE tracking types (CUSTOM needs custom_event_name), action_source enum,
//   hashed identifiers are 64 hex, metadata.conversion_id; errors `{error:{code,message,fields:[{field,message}]}}`.
//   It de-duplicates on (pixel, conversion_id) like Reddit, and counts what arrived. With `flatErrors` it refuses as
//   Reddit often does in production: `{"error":{"code":400,"message":"invalid action_source: web"}}`, no field list,
//   so nothing says which event of the batch was bad. A test event's id is accepted as
//   `data.test_id` or as `?test_id=` (both at once, or any other query parameter, is a 400 naming it).
// - The token endpoint compares the Basic credentials raw, as Reddit does (see reddit-ads/hooks.ts: the RFC's
//   form-urlencoding of `-` and `_` in client ids would be refused).

export const TRACKING_TYPES = new Set(["PAGE_VISIT", "VIEW_CONTENT", "SEARCH", "ADD_TO_CART", "ADD_TO_WISHLIST", "LEAD", "PURCHASE", "SIGN_UP", "CUSTOM"]);
const ACTION_SOURCES = new Set(["WEBSITE", "APP", "OTHER", "PHYSICAL_STORE"]);
const HEX64 = /^[0-9a-f]{64}$/;
const EVENT_KEYS = new Set(["event_at", "action_source", "type", "click_id", "user", "metadata"]);

export interface ReceivedEvent {
  pixelId: string;
  testId: string | null;
  /** Where the test id came: the body's `data.test_id` or the query's `test_id`. */
  testIdIn: "body" | "query" | null;
  event: Record<string, any>;
}

export interface RedditAdsServer {
  url: string;
  authorizeUrl: string;
  tokenUrl: string;
  app: { clientId: string; clientSecret: string };
  /** Every event accepted (duplicates included), in arrival order. */
  received: ReceivedEvent[];
  /** Distinct conversions per pixel (Reddit's de-duplication on conversion_id). */
  unique(pixelId: string): Map<string, ReceivedEvent>;
  /** Accepted requests and their sizes. */
  requests: { pixelId: string; size: number; token: string }[];
  /** Tokens accepted on the API (issued OAuth tokens and conversion tokens). */
  addConversionToken(): string;
  revokeAll(): void;
  /** The next n requests to the API answer this status (429 with Retry-After: 1, 503, ...). */
  failNext(n: number, status: number): void;
  /** Events with this conversion_id are refused by name (a 400 naming data.events[i]), as Reddit refuses a bad event. */
  refuseConversion(conversionId: string): void;
  /** Token grants by type and refused ones. */
  counts: { authorization_code: number; refresh_token: number; refused: number };
  /** Refuse invalid bodies with a flat message and no `fields` (which event was bad is not said). */
  flatErrors: boolean;
  /** API requests refused with 400 (for counting the requests a client spends). */
  refusedRequests: number;
  /** Hold each accepted request's answer this long (ms), after recording its events. */
  delayMs: number;
  /** Events of accepted requests whose answer is still held. */
  inFlight(): number;
  /** Access-token lifetime in seconds (default 3600). */
  accessTokenTtl: number;
  /** A restart: open connections dropped, new ones refused for downMs, then the same port answers with all kept. */
  restart(downMs: number): Promise<void>;
  close(): Promise<void>;
}

type Grant = { scope: string; permanent: boolean };

export async function startRedditAdsServer(opts: StandInOptions & { consentPage?: boolean } = {}): Promise<RedditAdsServer> {
  const app = opts.app ?? { clientId: "ads-client-" + crypto.randomBytes(4).toString("hex"), clientSecret: crypto.randomBytes(16).toString("hex") };
  const codes = new Map<string, { redirectUri: string; grant: Grant }>();
  const access = new Map<string, Grant | "conversion">();
  const refresh = new Map<string, Grant>();
  const received: ReceivedEvent[] = [];
  const requests: RedditAdsServer["requests"] = [];
  const counts = { authorization_code: 0, refresh_token: 0, refused: 0 };
  let failures: { n: number; status: number } = { n: 0, status: 0 };
  const refused = new Set<string>();
  let inFlight = 0;
  const token = (p: string) => `${p}-${crypto.randomBytes(18).toString("base64url")}`;

  const json = (res: import("node:http").ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const apiError = (res: import("node:http").ServerResponse, status: number, code: string, message: string, fields?: { field: string; message: string }[]) => {
    if (status === 400) server.refusedRequests++;
    if (status === 400 && server.flatErrors) {
      // Only the first problem, said as a sentence, with the event's position left out.
      const f = fields?.[0];
      return json(res, status, { error: { code: 400, message: f ? `invalid ${f.field.replace(/^data\.events\[\d+\]\./, "")}: ${f.message}` : message } });
    }
    return json(res, status, { error: { code, message, ...(fields ? { fields } : {}) } });
  };

  function issue(grant: Grant) {
    const at = token("ads-at");
    access.set(at, grant);
    const body: Record<string, unknown> = { access_token: at, token_type: "bearer", expires_in: server.accessTokenTtl, scope: grant.scope };
    if (grant.permanent) { const rt = token("ads-rt"); refresh.set(rt, grant); body.refresh_token = rt; }
    return body;
  }

  function validateEvent(e: any, i: number, now: number): { field: string; message: string }[] {
    const f: { field: string; message: string }[] = [];
    const at = `data.events[${i}]`;
    if (!e || typeof e !== "object") return [{ field: at, message: "must be an object" }];
    for (const k of Object.keys(e)) if (!EVENT_KEYS.has(k)) f.push({ field: `${at}.${k}`, message: "unknown field" });
    if (!Number.isInteger(e.event_at)) f.push({ field: `${at}.event_at`, message: "must be an integer (Unix time in milliseconds)" });
    else if (e.event_at < 1e12) f.push({ field: `${at}.event_at`, message: "must be in milliseconds" });
    else if (e.event_at < now - 7 * 86_400_000) f.push({ field: `${at}.event_at`, message: "is more than 7 days in the past" });
    else if (e.event_at > now + 5 * 60_000) f.push({ field: `${at}.event_at`, message: "is in the future" });
    if (!ACTION_SOURCES.has(e.action_source)) f.push({ field: `${at}.action_source`, message: "must be one of WEBSITE, APP, OTHER, PHYSICAL_STORE" });
    const t = e.type?.tracking_type;
    if (!TRACKING_TYPES.has(t)) f.push({ field: `${at}.type.tracking_type`, message: `invalid tracking type ${JSON.stringify(t)}` });
    if (t === "CUSTOM" && (typeof e.type.custom_event_name !== "string" || !e.type.custom_event_name)) f.push({ field: `${at}.type.custom_event_name`, message: "required for CUSTOM" });
    for (const k of ["email", "external_id", "ip_address", "phone_number", "idfa", "aaid"])
      if (e.user?.[k] !== undefined && !HEX64.test(e.user[k])) f.push({ field: `${at}.user.${k}`, message: "must be a SHA-256 hex digest" });
    if (typeof e.metadata?.conversion_id !== "string" || !e.metadata.conversion_id) f.push({ field: `${at}.metadata.conversion_id`, message: "required" });
    if (refused.has(e.metadata?.conversion_id)) f.push({ field: `${at}.metadata.conversion_id`, message: "conversion refused" });
    if (e.metadata?.value !== undefined && typeof e.metadata.value !== "number") f.push({ field: `${at}.metadata.value`, message: "must be a number" });
    return f;
  }

  const authorize = authorizeEndpoint({
    provider: "Reddit", clientId: app.clientId,
    issue(q) {
      const scopes = (q.get("scope") ?? "").split(/[ ,]+/).filter(Boolean);
      if (q.get("response_type") !== "code" || !["temporary", "permanent"].includes(q.get("duration") ?? "") || !scopes.includes("adsconversions")) return { error: "invalid_request" };
      const code = token("code");
      codes.set(code, { redirectUri: q.get("redirect_uri")!, grant: { scope: scopes.join(" "), permanent: q.get("duration") === "permanent" } });
      return { code };
    },
    decide: () => (opts.consentPage ? null : "approve"),
  });

  const http = bodyServer((req, res, url, raw) => {
    if (url.pathname === "/api/v1/authorize") return authorize(req, res, url, raw);
    if (req.method === "POST" && url.pathname === "/api/v1/access_token") {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
      const [id, secret] = basic ? Buffer.from(basic[1], "base64").toString().split(":") : [];
      if (id !== app.clientId || secret !== app.clientSecret) { counts.refused++; return json(res, 401, { message: "Unauthorized", error: 401 }); }
      const form = new URLSearchParams(raw);
      if (form.get("grant_type") === "authorization_code") {
        const c = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        if (!c || c.redirectUri !== form.get("redirect_uri")) { counts.refused++; return json(res, 400, { error: "invalid_grant" }); }
        counts.authorization_code++;
        return json(res, 200, issue(c.grant));
      }
      if (form.get("grant_type") === "refresh_token") {
        const g = refresh.get(form.get("refresh_token") ?? "");
        if (!g) { counts.refused++; return json(res, 400, { error: "invalid_grant" }); }
        counts.refresh_token++;
        const body = issue({ ...g, permanent: false }); // Reddit keeps the same refresh token
        return json(res, 200, body);
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    }
    const m = /^\/api\/v3\/pixels\/([^/]+)\/conversion_events$/.exec(url.pathname);
    if (m && req.method === "POST") {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const grant = bearer ? access.get(bearer) : undefined;
      if (!grant || (grant !== "conversion" && !grant.scope.split(" ").includes("adsconversions"))) return apiError(res, 401, "UNAUTHORIZED", "invalid or expired token");
      if (failures.n > 0) {
        failures.n--;
        if (failures.status === 429) return json(res, 429, { error: { code: "TOO_MANY_REQUESTS", message: "rate limit exceeded" } }, { "retry-after": "1", "x-ratelimit-remaining": "0" });
        return apiError(res, failures.status, "INTERNAL_ERROR", "try again");
      }
      const pixelId = decodeURIComponent(m[1]);
      if (!/^a2_[a-z0-9]+$/i.test(pixelId)) return apiError(res, 404, "NOT_FOUND", "pixel not found");
      let body: any;
      try { body = JSON.parse(raw); } catch { return apiError(res, 400, "INVALID_JSON", "body is not JSON"); }
      const data = body?.data;
      if (!data || typeof data !== "object" || Object.keys(body).length !== 1) return apiError(res, 400, "VALIDATION_ERROR", "body must be {data}", [{ field: "data", message: "required" }]);
      for (const k of Object.keys(data)) if (k !== "events" && k !== "test_id") return apiError(res, 400, "VALIDATION_ERROR", "unknown field", [{ field: `data.${k}`, message: "unknown field" }]);
      for (const k of url.searchParams.keys()) if (k !== "test_id") return apiError(res, 400, "VALIDATION_ERROR", "unknown query parameter", [{ field: k, message: "unknown query parameter" }]);
      const queryTestId = url.searchParams.get("test_id");
      if (queryTestId !== null && data.test_id !== undefined) return apiError(res, 400, "VALIDATION_ERROR", "test_id given twice", [{ field: "test_id", message: "give it as data.test_id or as ?test_id=, not both" }]);
      if (queryTestId === "" || (data.test_id !== undefined && (typeof data.test_id !== "string" || !data.test_id))) return apiError(res, 400, "VALIDATION_ERROR", "invalid test_id", [{ field: queryTestId === "" ? "test_id" : "data.test_id", message: "must be a non-empty string" }]);
      const testId: string | null = queryTestId ?? data.test_id ?? null;
      const testIdIn = queryTestId !== null ? "query" as const : data.test_id !== undefined ? "body" as const : null;
      if (!Array.isArray(data.events) || data.events.length < 1 || data.events.length > 1000) return apiError(res, 400, "VALIDATION_ERROR", "events must hold 1 to 1000 events", [{ field: "data.events", message: "1 to 1000 events" }]);
      const now = Date.now();
      const fields = data.events.flatMap((e: unknown, i: number) => validateEvent(e, i, now));
      if (fields.length) return apiError(res, 400, "VALIDATION_ERROR", "invalid events", fields);
      for (const event of data.events) received.push({ pixelId, testId, testIdIn, event });
      requests.push({ pixelId, size: data.events.length, token: bearer! });
      // Accepted now; the answer may be held (server.delayMs): the window a kill -9 of the sender can fall into.
      inFlight += data.events.length;
      return setTimeout(() => { inFlight -= data.events.length; if (!res.destroyed) json(res, 200, { data: { success: true } }); }, server.delayMs);
    }
    apiError(res, 404, "NOT_FOUND", "no such route");
  });
  const base = await listenLocal(http, opts.port);
  const server: RedditAdsServer = {
    url: base, authorizeUrl: `${base}/api/v1/authorize`, tokenUrl: `${base}/api/v1/access_token`, app, received, requests, counts, accessTokenTtl: 3600, delayMs: 0, flatErrors: false, refusedRequests: 0, inFlight: () => inFlight,
    unique(pixelId) {
      const out = new Map<string, ReceivedEvent>();
      for (const r of received) if (r.pixelId === pixelId && !out.has(r.event.metadata.conversion_id)) out.set(r.event.metadata.conversion_id, r);
      return out;
    },
    addConversionToken() { const t = token("conv"); access.set(t, "conversion"); return t; },
    revokeAll() { access.clear(); refresh.clear(); },
    failNext(n, status) { failures = { n, status }; },
    refuseConversion(id) { refused.add(id); },
    async restart(downMs) {
      await new Promise<void>((r) => { http.closeAllConnections(); http.close(() => r()); });
      await new Promise((r) => setTimeout(r, downMs));
      await listenLocal(http, Number(new URL(base).port));
    },
    close: () => new Promise((r) => { http.closeAllConnections(); http.close(() => r()); }),
  };
  return server;
}
