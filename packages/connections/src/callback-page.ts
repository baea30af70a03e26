import crypto from "node:crypto";
import type { CallbackOutcome } from "./authorize.ts";

// What the browser sees at the end of a flow: a small self-contained page (no scripts, no external assets, every
// dynamic value escaped, a CSP that allows only its own inline style), or a 303 to the return_url given at `auth`.
// The callback's URL carries the code and state, so neither answer may be cached or leak it as a Referer.

const STYLE = "body{font:16px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#1f2328}" +
  "h1{font-size:1.4rem;margin:0 0 .5rem}.ok{color:#1a7f37}.err{color:#cf222e}p{margin:.5rem 0}code{font-size:.9em}";
const STYLE_HASH = crypto.createHash("sha256").update(STYLE).digest("base64");

const COMMON_HEADERS = {
  "Cache-Control": "no-store",
  Pragma: "no-cache",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
};

export const CALLBACK_PAGE_HEADERS = {
  ...COMMON_HEADERS,
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  "X-Frame-Options": "DENY",
};

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const STATUS: Record<string, number> = {
  invalid_state: 400, expired_state: 400, invalid_request: 400, provider_error: 400, access_denied: 403,
  provider_not_configured: 501, exchange_failed: 502,
};

export interface CallbackAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function callbackAnswer(o: CallbackOutcome): CallbackAnswer {
  if (o.returnUrl) {
    const u = new URL(o.returnUrl);
    u.searchParams.set("connection", o.provider ?? "");
    u.searchParams.set("status", o.ok ? "connected" : "error");
    if (!o.ok) u.searchParams.set("error", o.error);
    return { status: 303, headers: { ...COMMON_HEADERS, Location: u.href }, body: "" };
  }
  const name = o.displayName ?? "The provider";
  const [title, cls, lines] = o.ok
    ? [`${name} is connected`, "ok", [`Trendgate can now use ${name} for your account.`, "You can close this window."]]
    : [o.provider ? `${name} was not connected` : "Nothing was connected", "err", [o.message, `Error code: ${o.error}`]];
  const html = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">" +
    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">" +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>` +
    `<h1 class="${cls}">${escapeHtml(title)}</h1>${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join("")}</body></html>`;
  return { status: o.ok ? 200 : STATUS[o.error] ?? 400, headers: CALLBACK_PAGE_HEADERS, body: html };
}
