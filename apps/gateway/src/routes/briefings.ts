import type { Request, Response } from "express";
import { z } from "zod";
import { BriefingRevocation, Problem, storableText } from "@trendgate/contracts";
import { revokeBriefingLinks } from "@trendgate/db";
import { BRIEFING_PAGE_HEADERS, briefingLinkKey, loadBriefing, renderBriefing, renderBriefingError, verifyBriefingToken, type BriefingKey } from "@trendgate/trends";
import { ApiError } from "../http/api-error.ts";
import { defineRoute } from "../http/route.ts";
import type { GatewayDeps } from "../deps.ts";

// Trend briefings: the page a trend event's source_link opens, for whoever received the alert (no API key), and the
// account's switch that ends every link issued so far. The JSON of a trend stays at GET /api/trends/{id}.

const TAG = "Trends";
const PAGE_PATH = "/briefings/{token}";
const BriefingToken = z.string().check(storableText).meta({ description: "The signed token of a briefing link (from a trend event's `source_link`)" });
const Html = z.string().meta({ description: "A self-contained HTML page (no scripts, no external assets)" });

const keys = new WeakMap<object, BriefingKey>();
const keyOf = (deps: GatewayDeps) => keys.get(deps.config) ?? keys.set(deps.config, briefingLinkKey(deps.config.ENCRYPTION_KEY)).get(deps.config)!;

/**
 * A link that shows nothing: a small HTML page for browsers (they ask for text/html), a problem for everything else.
 * 404 does not tell unknown, malformed, tampered and revoked links apart; 410 is an expired one.
 */
function refuse(req: Request, res: Response, status: 404 | 410) {
  const { "Content-Type": _html, ...headers } = BRIEFING_PAGE_HEADERS;
  if (req.accepts(["application/problem+json", "text/html"]) === "text/html") {
    res.status(status).set(BRIEFING_PAGE_HEADERS).send(renderBriefingError(status));
    return;
  }
  res.set(headers);
  throw status === 410
    ? new ApiError("link_expired", "This briefing link has expired")
    : new ApiError("not_found", "No briefing at this link (unknown, malformed or revoked)");
}

export const briefingRoutes = [
  defineRoute({
    method: "get", path: PAGE_PATH, operationId: "getTrendBriefing", tag: TAG, auth: "public", raw: true,
    summary: "A trend's briefing page, opened from a trend event's source_link (no API key)",
    description:
      "A readable HTML page of one trend: what rose (now against expected, ratio), how fast (velocity, acceleration), since " +
      "when, a chart of its topic's recent buckets, sentiment, up to 5 recent linked posts, and recommended next steps. " +
      "The token is signed (HMAC-SHA256, key derived from ENCRYPTION_KEY) and names the account and the trend; it works " +
      "for BRIEFING_LINK_TTL_SECONDS (7 days by default) unless the account revoked its links since (`POST /api/briefings/revoke`). " +
      "Errors are HTML pages when the client accepts text/html (browsers), else problems. Rate limited per client address " +
      "(the `free` plan's quota per RATE_LIMIT_WINDOW_SECONDS). Not cached, not indexed, no Referer sent to linked posts.",
    params: z.object({ token: BriefingToken }),
    responses: {
      200: { description: "The briefing page", content: { "text/html": Html } },
      404: { description: "Unknown, malformed, tampered or revoked link, or the trend is gone (not told apart)", content: { "text/html": Html, "application/problem+json": Problem } },
      410: { description: "The link has expired (`link_expired`)", content: { "text/html": Html, "application/problem+json": Problem } },
      429: { description: "Too many requests from this address (`rate_limited`); retry after Retry-After seconds", content: { "application/problem+json": Problem } },
      503: { description: "Postgres or Redis unavailable; retry with backoff (Retry-After)", content: { "application/problem+json": Problem } },
    },
    async handler({ deps, req, res }) {
      res.locals.logPath = PAGE_PATH; // the token opens the page: it stays out of the access log
      const address = req.ip ?? req.socket.remoteAddress ?? "unknown";
      for (const [k, v] of Object.entries(await deps.rateLimits.consume({ accountId: `ip:${address}`, credential: { kind: "apiKey", id: "" }, plan: "free" }))) res.setHeader(k, v);
      const now = new Date();
      const token = BriefingToken.safeParse(req.params.token);
      const link = token.success ? verifyBriefingToken(keyOf(deps), token.data, now) : null;
      if (!link?.ok) return refuse(req, res, link?.reason === "expired" ? 410 : 404);
      const data = await loadBriefing(deps.db, link, { bucketSeconds: deps.config.DETECTION_BUCKET_SECONDS }, now);
      if (!data) return refuse(req, res, 404);
      res.status(200).set(BRIEFING_PAGE_HEADERS).send(renderBriefing(data, { generatedAt: now, expiresAt: link.expiresAt }));
    },
  }),
  defineRoute({
    method: "post", path: "/api/briefings/revoke", operationId: "revokeBriefingLinks", tag: TAG, auth: "apiKey",
    summary: "End every briefing link of your account issued until now",
    description:
      "Links issued before `revoked_before` stop opening (404); links issued afterwards (new trend events) work. Use it when " +
      "alerts were forwarded where they should not have been. Calling it again moves the instant forward.",
    responses: { 200: { description: "The instant before which links no longer open", schema: BriefingRevocation } },
    async handler({ deps, auth }) {
      const at = new Date();
      await revokeBriefingLinks(deps.db, auth.accountId, at);
      return { status: 200, body: { revoked_before: at.toISOString() }, headers: { "Cache-Control": "no-store" } };
    },
  }),
];
