import type { RequestHandler } from "express";

/**
 * Security headers on every answer. `nosniff` keeps a browser from running a JSON answer as script or HTML; a
 * Content-Security-Policy with frame-ancestors (and X-Frame-Options for older browsers) keeps every page out of
 * other sites' frames (clickjacking); no Referer leaves with a link (briefing URLs carry their access token).
 * API answers get a policy under which nothing loads or runs; each HTML page sets the least its own assets need
 * (the briefing and OAuth callback pages set theirs, hash-pinned, where they answer).
 */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** Swagger UI (/docs): its bundle, init script and stylesheet from /docs itself; it sets inline styles and data: icons. */
export const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Bull Board (/admin/queues): scripts and styles from its base path, inline styles, and its Google-hosted fonts. */
export const DASHBOARD_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline' https://fonts.googleapis.com; font-src 'self' data: https://fonts.gstatic.com; img-src 'self' data:; connect-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'";

export function securityHeaders(csp = API_CSP): RequestHandler {
  return (_req, res, next) => {
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("X-Frame-Options", "DENY");
    res.setHeader("Referrer-Policy", "no-referrer");
    res.setHeader("Content-Security-Policy", csp);
    next();
  };
}
