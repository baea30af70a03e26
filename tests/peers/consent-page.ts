import type http from "node:http";

// The one consent page of every stand-in's authorization endpoint: a real HTML page a person approves or denies in a
// browser (a form POST, no script), and `browse`, which does the same over plain HTTP for tests. Stand-ins that issue
// their own codes mount `authorizeEndpoint`; the oidc-provider peer (oauth-server.ts) renders the page itself at its
// consent interaction.

export type Decision = "approve" | "deny";

export interface ConsentPage {
  /** Who asks for consent ("Meta", "Slack"). */
  provider: string;
  clientId: string;
  scopes: string[];
  /** What the app will reach, one line each (ad accounts, a workspace). */
  grants?: string[];
  redirectUri: string;
  /** Where the form posts, and the fields it carries back. */
  action: string;
  fields?: Record<string, string>;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const unesc = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

export function renderConsentPage(p: ConsentPage): string {
  const list = (items: string[]) => items.length ? `<ul>${items.map((i) => `<li>${esc(i)}</li>`).join("")}</ul>` : "<p>(nothing named)</p>";
  const hidden = Object.entries(p.fields ?? {}).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(p.provider)}: authorize ${esc(p.clientId)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}
.card{border:1px solid #ccc;border-radius:8px;padding:1.5rem}button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem;cursor:pointer}
.approve{background:#1a73e8;color:#fff;border:0;border-radius:4px}.deny{background:#fff;border:1px solid #999;border-radius:4px}
small{color:#666}</style></head>
<body><div class="card">
<h1>${esc(p.provider)} <small>(local stand-in)</small></h1>
<p>The app <b>${esc(p.clientId)}</b> asks to act on your behalf with these permissions:</p>
${list(p.scopes)}
${p.grants?.length ? `<p>It will reach:</p>${list(p.grants)}` : ""}
<p>You will be sent back to <code>${esc(p.redirectUri.split("?")[0])}</code>.</p>
<form method="post" action="${esc(p.action)}">
${hidden}
<button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button class="deny" type="submit" name="decision" value="deny">Deny</button>
</form></div></body></html>`;
}

export function sendConsentPage(res: http.ServerResponse, p: ConsentPage): void {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(renderConsentPage(p));
}

/** A request the provider refuses without sending the browser back (unknown app, no redirect URI): a page saying why. */
export function sendRefusalPage(res: http.ServerResponse, provider: string, why: string): void {
  res.writeHead(400, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(provider)}: error</title></head><body><h1>${esc(provider)}</h1><p>${esc(why)}</p></body></html>`);
}

/** Sends the browser back to the client with these parameters (302 from a GET, 303 after the form's POST). */
export function redirectBack(res: http.ServerResponse, redirectUri: string, params: Record<string, string | null | undefined>, status = 303): void {
  const to = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) to.searchParams.set(k, v);
  res.writeHead(status, { location: to.href });
  res.end();
}

/** The consent form's POST body: the button pressed and the fields it carried. */
export function readConsentForm(body: string): { decision: Decision | null; fields: URLSearchParams } {
  const fields = new URLSearchParams(body);
  const d = fields.get("decision");
  fields.delete("decision");
  return { decision: d === "approve" || d === "deny" ? d : null, fields };
}

export interface AuthorizeEndpoint {
  provider: string;
  /** The registered app's client id (what `clientIdParam` must name). */
  clientId: string;
  /** The query parameter carrying the client id (TikTok: app_id); default client_id. */
  clientIdParam?: string;
  /** The parameter the code comes back in (TikTok: auth_code); default code. */
  codeParam?: string;
  /** A request the provider refuses outright (400 page, no redirect): the reason, or null. */
  check?(q: URLSearchParams): string | null;
  /** The user approved: a code bound to this request, or an OAuth error sent back instead. */
  issue(q: URLSearchParams): { code: string } | { error: string };
  /** What the app will reach, for the page. */
  grants?(): string[];
  /** A decision made without the page (tests that approve programmatically); null shows the page. */
  decide?(): Decision | null;
}

/**
 * A stand-in's authorization endpoint: GET validates the request and shows the consent page (or, when `decide`
 * answers, redirects at once); the page's POST sends the browser back with a code or `error=access_denied`.
 */
export function authorizeEndpoint(ep: AuthorizeEndpoint) {
  const idParam = ep.clientIdParam ?? "client_id";
  return (req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: string): void => {
    const post = req.method === "POST";
    const { decision, fields } = post ? readConsentForm(body) : { decision: null, fields: url.searchParams };
    const redirectUri = fields.get("redirect_uri");
    if (fields.get(idParam) !== ep.clientId) return sendRefusalPage(res, ep.provider, `Unknown ${idParam}: ${fields.get(idParam) ?? "(none)"}`);
    if (!redirectUri || !/^https?:$/.test(URL.canParse(redirectUri) ? new URL(redirectUri).protocol : "")) return sendRefusalPage(res, ep.provider, "A valid redirect_uri is required");
    const refused = ep.check?.(fields);
    if (refused) return sendRefusalPage(res, ep.provider, refused);
    const decided = post ? decision : ep.decide?.() ?? null;
    if (!decided) {
      if (post) return sendRefusalPage(res, ep.provider, "Press Approve or Deny");
      return sendConsentPage(res, {
        provider: ep.provider, clientId: ep.clientId, redirectUri, action: url.pathname, fields: Object.fromEntries(fields),
        scopes: (fields.get("scope") ?? "").split(/[ ,]+/).filter(Boolean), grants: ep.grants?.(),
      });
    }
    const state = fields.get("state");
    const status = post ? 303 : 302;
    if (decided === "deny") return redirectBack(res, redirectUri, { error: "access_denied", error_description: "The user denied access", state }, status);
    const out = ep.issue(fields);
    redirectBack(res, redirectUri, "code" in out ? { [ep.codeParam ?? "code"]: out.code, state } : { error: out.error, state }, status);
  };
}

/** The consent form in a page this module rendered: where it posts and the hidden fields it carries. */
export function parseConsentForm(html: string, pageUrl: string): { action: string; fields: URLSearchParams } | null {
  const form = /<form method="post" action="([^"]*)">/.exec(html);
  if (!form) return null;
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields.append(unesc(m[1]), unesc(m[2]));
  return { action: new URL(unesc(form[1]), pageUrl).href, fields };
}

/**
 * Plays the browser from an authorization URL: follows the provider's redirects (keeping its cookies), presses the
 * consent page's button, and returns the URL the provider sent the browser back to (the client's redirect URI).
 */
export async function browse(authorizationUrl: string, decision: Decision = "approve"): Promise<URL> {
  const origin = new URL(authorizationUrl).origin;
  const jar = new Map<string, string>();
  let at = authorizationUrl;
  let init: RequestInit = {};
  for (let hop = 0; hop < 12; hop++) {
    const res = await fetch(at, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair.indexOf("=");
      jar.set(pair.slice(0, i).trim(), pair.slice(i + 1));
    }
    const location = res.headers.get("location");
    if (location) {
      await res.body?.cancel();
      const next = new URL(location, at);
      if (next.origin !== origin) return next; // back at the client
      at = next.href;
      init = {};
      continue;
    }
    const text = await res.text();
    const form = res.status === 200 ? parseConsentForm(text, at) : null;
    if (!form) throw new Error(`the authorization server stopped at ${at}: ${res.status} ${text.slice(0, 500)}`);
    form.fields.set("decision", decision);
    at = form.action;
    init = { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form.fields.toString() };
  }
  throw new Error("too many redirects at the authorization server");
}
