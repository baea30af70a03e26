import http from "node:http";
import { listenLocal, type StandInOptions } from "./listen.ts";

/**
 * A local stand-in for the YouTube Data API v3 on 127.0.0.1, speaking its wire protocol: GET /youtube/v3/search and
 * /youtube/v3/videos, `key=` query auth, string counts, opaque page tokens, HTML-escaped search snippets and Google's
 * error body {error:{code, message, errors:[{message, domain, reason}]}}. Tests set the videos, read what was asked,
 * and make the next N requests fail in a chosen way.
 */

export interface FixtureVideo {
  id: string;
  title: string;
  channelTitle: string;
  publishedAt: string; // RFC 3339
  description?: string;
  viewCount?: number;
  /** null: hidden by the owner, so the API omits it. */
  likeCount?: number | null;
  commentCount?: number | null;
}

export type YouTubeFailure =
  | "quotaExceeded" // 403, daily quota spent
  | "rateLimitExceeded" // 403, short-term limit
  | "keyInvalid" // 400, the classic bad-key body
  | "apiKeyInvalid" // 400, the newer bad-key body (reason badRequest + ErrorInfo API_KEY_INVALID)
  | "backendError"; // 500

export interface RecordedRequest {
  method: string; path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders;
  /** When it arrived (Date.now()) and the status it was answered with. */
  at: number; status: number;
}

/**
 * The project's daily quota as documented: search.list has its own bucket of 100 calls, everything else shares
 * 10,000 units (videos.list costs 1), counted per Pacific day; an overdrawn bucket answers 403 quotaExceeded until
 * midnight Pacific. Calls are counted whatever they answer, as Google does, per Cloud project: `apiKey` belongs to
 * project "default", `keys` maps further keys to their projects (several keys of one project share its quota).
 */
export const YOUTUBE_DAILY_QUOTA = { search: 100, default: 10_000 };
const pacificDay = (ms: number) => new Intl.DateTimeFormat("en-CA", { timeZone: "America/Los_Angeles" }).format(new Date(ms));

const error = (code: number, reason: string, message: string, domain = "global", extra: object = {}) =>
  ({ status: code, body: { error: { code, message, errors: [{ message, domain, reason }], ...extra } } });

const FAILURES: Record<YouTubeFailure, ReturnType<typeof error>> = {
  quotaExceeded: error(403, "quotaExceeded", 'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.', "youtube.quota"),
  rateLimitExceeded: error(403, "rateLimitExceeded", "Rate Limit Exceeded", "usageLimits"),
  keyInvalid: error(400, "keyInvalid", "Bad Request", "usageLimits"),
  apiKeyInvalid: error(400, "badRequest", "API key not valid. Please pass a valid API key.", "global", {
    status: "INVALID_ARGUMENT",
    details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "youtube.googleapis.com" } }],
  }),
  backendError: error(500, "backendError", "Backend Error"),
};

// search.list escapes these in snippets; videos.list does not.
const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const str = (n: number | null | undefined) => (n === null || n === undefined ? undefined : String(n));

export async function startYouTubeServer(opts: { apiKey: string; keys?: Record<string, string>; quota?: typeof YOUTUBE_DAILY_QUOTA } & Pick<StandInOptions, "port">) {
  let videos: FixtureVideo[] = [];
  const requests: RecordedRequest[] = [];
  const limits = opts.quota ?? YOUTUBE_DAILY_QUOTA;
  const projectOf = new Map<string, string>([[opts.apiKey, "default"], ...Object.entries(opts.keys ?? {})]);
  const projects = new Map<string, { day: string; search: number; default: number }>();
  /** Counts the call against its project's bucket; the quotaExceeded answer when that bucket was already spent today. */
  function charge(project: string, path: string) {
    const day = pacificDay(Date.now());
    let spent = projects.get(project);
    if (spent?.day !== day) projects.set(project, spent = { day, search: 0, default: 0 });
    const bucket = path === "/youtube/v3/search" ? "search" : "default";
    if (spent[bucket] >= limits[bucket]) return FAILURES.quotaExceeded;
    spent[bucket]++;
    return null;
  }
  const failures: { failure: YouTubeFailure; headers: Record<string, string> }[] = [];
  const pageTokens = new Map<string, { query: string; offset: number }>();

  const snippet = (v: FixtureVideo, escape: boolean) => {
    const e = escape ? escapeHtml : (s: string) => s;
    return { publishedAt: v.publishedAt, channelId: `UC${v.channelTitle.replace(/\W/g, "")}`, title: e(v.title), description: e(v.description ?? ""), channelTitle: e(v.channelTitle), liveBroadcastContent: "none" };
  };

  function search(q: URLSearchParams) {
    if (q.get("part") !== "snippet") return error(400, "required", "Required parameter: part");
    const max = Number(q.get("maxResults") ?? 5);
    if (!Number.isInteger(max) || max < 0 || max > 50) return error(400, "invalidValue", `Invalid value '${q.get("maxResults")}'. Values must be within the range: [0, 50]`);
    const after = q.get("publishedAfter");
    if (after !== null && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(after)) return error(400, "invalidPublishedAfter", "Invalid value for publishedAfter");
    // A page token belongs to the query that produced it.
    const queryKey = ["q", "type", "order", "publishedAfter", "regionCode", "maxResults"].map((k) => q.get(k)).join("|");
    let offset = 0;
    const token = q.get("pageToken");
    if (token) {
      const t = pageTokens.get(token);
      if (!t || t.query !== queryKey) return error(400, "invalidPageToken", "The request specifies an invalid page token.");
      offset = t.offset;
    }
    const term = (q.get("q") ?? "").toLowerCase();
    const matches = videos
      .filter((v) => `${v.title} ${v.description ?? ""}`.toLowerCase().includes(term))
      .filter((v) => after === null || Date.parse(v.publishedAt) > Date.parse(after))
      .sort((a, b) => (q.get("order") === "date" ? Date.parse(b.publishedAt) - Date.parse(a.publishedAt) : 0));
    const page = matches.slice(offset, offset + max);
    let nextPageToken: string | undefined;
    if (offset + max < matches.length) {
      nextPageToken = `CA${(offset + max).toString(36).toUpperCase()}QAA${pageTokens.size}`;
      pageTokens.set(nextPageToken, { query: queryKey, offset: offset + max });
    }
    return {
      status: 200,
      body: {
        kind: "youtube#searchListResponse", etag: "etag", nextPageToken, regionCode: q.get("regionCode") ?? "US",
        pageInfo: { totalResults: matches.length, resultsPerPage: max },
        items: page.map((v) => ({ kind: "youtube#searchResult", etag: "etag", id: { kind: "youtube#video", videoId: v.id }, snippet: snippet(v, true) })),
      },
    };
  }

  function list(q: URLSearchParams) {
    const parts = (q.get("part") ?? "").split(",");
    if (!q.get("part")) return error(400, "required", "Required parameter: part");
    const ids = q.get("id")?.split(",").filter(Boolean);
    if (!ids) return error(400, "missingRequiredParameter", "No filter selected. Expected one of: myRated, id, chart");
    if (ids.length > 50) return error(400, "badRequest", "The request specifies too many video IDs."); // assumed wording
    const found = ids.map((id) => videos.find((v) => v.id === id)).filter((v): v is FixtureVideo => !!v);
    return {
      status: 200,
      body: {
        kind: "youtube#videoListResponse", etag: "etag", pageInfo: { totalResults: found.length, resultsPerPage: found.length },
        items: found.map((v) => ({
          kind: "youtube#video", etag: "etag", id: v.id,
          ...(parts.includes("snippet") ? { snippet: snippet(v, false) } : {}),
          ...(parts.includes("statistics") ? { statistics: { viewCount: str(v.viewCount ?? 0), likeCount: str(v.likeCount), favoriteCount: "0", commentCount: str(v.commentCount) } } : {}),
        })),
      },
    };
  }

  function answer(req: http.IncomingMessage): { status: number; body: unknown; headers?: Record<string, string> } {
    const url = new URL(req.url ?? "/", "http://localhost");
    const fail = failures.shift();
    if (fail) return { ...FAILURES[fail.failure], headers: fail.headers };
    const key = url.searchParams.get("key");
    if (!key) return error(403, "forbidden", "The request is missing a valid API key.", "global", { status: "PERMISSION_DENIED" });
    const project = projectOf.get(key);
    if (!project) return FAILURES.keyInvalid;
    const over = charge(project, url.pathname);
    if (over) return over;
    if (req.method !== "GET") return error(405, "methodNotAllowed", "Method not allowed");
    if (url.pathname === "/youtube/v3/search") return search(url.searchParams);
    if (url.pathname === "/youtube/v3/videos") return list(url.searchParams);
    return error(404, "notFound", "Not Found");
  }

  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const a = answer(req);
      const url = new URL(req.url ?? "/", "http://localhost");
      requests.push({ method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, at: Date.now(), status: a.status });
      res.writeHead(a.status, { "content-type": "application/json; charset=UTF-8", ...a.headers });
      res.end(JSON.stringify(a.body));
    });
  });
  const baseUrl = await listenLocal(server, opts.port);

  return {
    baseUrl: `${baseUrl}/youtube/v3`,
    requests,
    /** Requests to one API path, e.g. "/youtube/v3/search". */
    on: (path: string) => requests.filter((r) => r.path === path),
    setVideos(v: FixtureVideo[]) { videos = v; },
    /** Today's quota untouched, in every project (new projects, or the next Pacific day). */
    resetQuota() { projects.clear(); },
    /** The next n requests fail this way, whatever they ask (headers, e.g. Retry-After, are added to the answer). */
    failNext(n: number, failure: YouTubeFailure, headers: Record<string, string> = {}) {
      for (let i = 0; i < n; i++) failures.push({ failure, headers });
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
export type YouTubeServer = Awaited<ReturnType<typeof startYouTubeServer>>;
