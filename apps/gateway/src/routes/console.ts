import {
  ConsoleAccess, ConsoleAssetParam, ConsoleSession, ConsoleSessionIdParam, ConsoleSessionList, ConsoleSessionWithLink, ConsoleSettings, CreateConsoleSessionBody,
  ExchangeConsoleLinkBody, ID_PATTERN, pageQuery,
} from "@trendgate/contracts";
import {
  createConsoleSession, findAccountConsoleSession, findConsoleSession, getConsoleFrameAncestors, listLiveConsoleSessions, openConsoleSession,
  revokeConsoleSession, setConsoleFrameAncestors, type ConsoleSessionRow,
} from "@trendgate/db";
import { consoleAssets } from "../console/assets.ts";
import { consoleCsp, consolePage } from "../console/page.ts";
import { ApiError, notFound } from "../http/api-error.ts";
import { clientAddress } from "../http/auth.ts";
import { keysetPage } from "../http/paginate.ts";
import { defineRoute } from "../http/route.ts";

// The web console: its page, and the sessions that open it. An API key creates a session as a one-time link; the
// page exchanges the link's token for an access token that the public API accepts for that account only (see
// docs/console.md). The console then calls the same routes as any API client: no rule is implemented twice.

const BASE = "/api/console";
const TAG = "Console";
const iso = (d: Date | null) => (d ? d.toISOString() : null);

function status(r: ConsoleSessionRow, now = new Date()): ConsoleSession["status"] {
  if (r.revokedAt) return "revoked";
  if (!r.openedAt) return r.linkExpiresAt > now ? "unopened" : "expired";
  return r.expiresAt && r.expiresAt > now ? "open" : "expired";
}

const toSession = (r: ConsoleSessionRow): ConsoleSession => ({
  id: r.id, label: r.label, status: status(r), link_expires_at: r.linkExpiresAt.toISOString(), opened_at: iso(r.openedAt),
  expires_at: iso(r.expiresAt), session_hours: r.sessionSeconds / 3600, created_at: r.createdAt.toISOString(),
});

export const consoleRoutes = [
  defineRoute({
    method: "get", path: "/console", operationId: "getConsolePage", tag: TAG, auth: "public", raw: true,
    summary: "The web console (open it with a session link from POST /api/console/sessions)",
    description: "One HTML page and its bundled script and stylesheet (/console/assets/…), no inline script. " +
      "With `?s=<session id>` the page may be framed by the origins in the account's console settings; otherwise by none.",
    responses: { 200: { description: "HTML page" } },
    async handler({ deps, req, res }) {
      const assets = await consoleAssets();
      const s = typeof req.query.s === "string" && ID_PATTERN.test(req.query.s) ? await findConsoleSession(deps.db, req.query.s) : null;
      const ancestors = s?.account.consoleFrameAncestors ?? [];
      res.setHeader("Content-Security-Policy", consoleCsp(ancestors));
      if (ancestors.length) res.removeHeader("X-Frame-Options"); // frame-ancestors decides; DENY would override it in old browsers
      res.setHeader("Cache-Control", "no-store");
      res.type("html").send(consolePage(assets));
    },
  }),
  defineRoute({
    method: "get", path: "/console/assets/{name}", operationId: "getConsoleAsset", tag: TAG, auth: "public", raw: true,
    summary: "The console's bundled script or stylesheet, by its content-hashed name (cached for a year; br or gzip when accepted)",
    params: ConsoleAssetParam,
    responses: { 200: { description: "JavaScript or CSS" } },
    // Declared for the document; a raw route reads the path itself (an unknown name is a 404, whatever its form).
    async handler({ req, res }) {
      const asset = (await consoleAssets()).byName.get(String(req.params.name));
      if (!asset) throw new ApiError("route_not_found", `No console asset ${req.params.name}; reload the console page`);
      res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
      res.setHeader("Vary", "Accept-Encoding");
      const encoding = req.acceptsEncodings("br", "gzip");
      if (encoding === "br" || encoding === "gzip") res.setHeader("Content-Encoding", encoding);
      res.type(asset.type).send(encoding === "br" ? asset.br : encoding === "gzip" ? asset.gzip : asset.body);
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/sessions`, operationId: "createConsoleSession", tag: TAG, auth: "apiKey", keyOnly: true, idempotent: "transactional",
    summary: "Create a web console session for the caller's account: a one-time link",
    description: "The answer's `url` opens the console once, until `link_expires_at`; the session then lasts `session_hours`. " +
      "Create one per person and visit: the link is the credential, shown only here. Revoke with DELETE.",
    body: CreateConsoleSessionBody,
    responses: { 201: { description: "Created; `url` is not retrievable later", schema: ConsoleSessionWithLink } },
    async handler({ deps, auth, body, atomically }) {
      return atomically(async (tx) => {
        const { row, link } = await createConsoleSession(tx, {
          accountId: auth.accountId, createdByKeyId: auth.credential.id, label: body.label ?? null,
          linkSeconds: body.link_minutes * 60, sessionSeconds: body.session_hours * 3600,
        });
        const url = new URL(`/console/?s=${row.id}`, deps.config.PUBLIC_BASE_URL);
        url.hash = `token=${link}`;
        return { status: 201, body: { ...toSession(row), url: url.toString() }, headers: { Location: `${BASE}/sessions/${row.id}` } };
      });
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/sessions`, operationId: "listConsoleSessions", tag: TAG, auth: "apiKey", keyOnly: true,
    summary: "The account's console sessions that can still be opened or used, newest first",
    query: pageQuery({ limit: 50, max: 200, cursor: { ids: ["cs"] } }),
    responses: { 200: { description: "A page of sessions", schema: ConsoleSessionList } },
    async handler({ deps, auth, query }) {
      return { status: 200, body: await keysetPage(query, (p) => listLiveConsoleSessions(deps.db, auth.accountId, p), toSession) };
    },
  }),
  defineRoute({
    method: "delete", path: `${BASE}/sessions/{session_id}`, operationId: "revokeConsoleSession", tag: TAG, auth: "apiKey",
    summary: "Revoke a console session (or its unopened link); a console session may revoke itself (sign out)",
    description: "Takes effect at once on every gateway: the next request, and the session's open stream, get 401.",
    params: ConsoleSessionIdParam,
    responses: { 204: { description: "Revoked" } },
    async handler({ deps, auth, params }) {
      if (auth.credential.kind === "consoleSession" && auth.credential.id !== params.session_id) throw notFound("Console session");
      const row = await findAccountConsoleSession(deps.db, auth.accountId, params.session_id);
      if (!row) throw notFound("Console session");
      await revokeConsoleSession(deps.db, auth.accountId, row.id);
      await deps.authenticator.invalidate(row.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/sessions/exchange`, operationId: "exchangeConsoleLink", tag: TAG, auth: "public",
    summary: "Open a console session: exchange the link's one-time token for an access token",
    description: "What the console page does with the `#token=` of its link. Works once per link: an unknown, used, expired or " +
      "revoked token answers 410 `link_expired` (the same answer for each, so it tells nothing). Failures count against the " +
      "caller's address like failed authentications.",
    body: ExchangeConsoleLinkBody,
    responses: {
      200: { description: "The session's access token", schema: ConsoleAccess },
      410: { description: "`link_expired`: ask for a new link" },
      429: { description: "Too many failed attempts from this address" },
    },
    async handler({ deps, req, body }) {
      const address = clientAddress(req);
      await deps.authFailures.assertAllowed(address);
      const opened = await openConsoleSession(deps.db, body.token);
      if (!opened) {
        await deps.authFailures.recordFailure(address);
        throw new ApiError("link_expired", "This console link has expired, was already used or was revoked; ask for a new one");
      }
      const { row, access } = opened;
      return { status: 200, body: { access_token: access, session_id: row.id, account_id: row.accountId, expires_at: row.expiresAt!.toISOString() }, headers: { "Cache-Control": "no-store" } };
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/settings`, operationId: "getConsoleSettings", tag: TAG, auth: "apiKey",
    summary: "The account's console settings",
    responses: { 200: { description: "The settings", schema: ConsoleSettings } },
    async handler({ deps, auth }) {
      return { status: 200, body: { frame_ancestors: await getConsoleFrameAncestors(deps.db, auth.accountId) } };
    },
  }),
  defineRoute({
    method: "put", path: `${BASE}/settings`, operationId: "putConsoleSettings", tag: TAG, auth: "apiKey", keyOnly: true,
    summary: "Set which origins may show the console in an iframe",
    description: "`frame_ancestors` becomes the console page's CSP frame-ancestors for this account's session links, e.g. " +
      "`[\"https://app.example.com\"]` to embed it in your product. Empty: no site may frame it.",
    body: ConsoleSettings,
    responses: { 200: { description: "Saved", schema: ConsoleSettings } },
    async handler({ deps, auth, body }) {
      const origins = [...new Set(body.frame_ancestors)];
      await setConsoleFrameAncestors(deps.db, auth.accountId, origins);
      return { status: 200, body: { frame_ancestors: origins } };
    },
  }),
];
