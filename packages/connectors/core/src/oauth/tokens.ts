import type * as oauth from "oauth4webapi";
import type { ProviderHttp } from "../http/provider-http.ts";
import type { ProviderEnv } from "../provider-config.ts";
import type { TokenSet } from "../tokens.ts";

/** A standard token response as a TokenSet; `expires_in` becomes an absolute expiry. */
export function tokenSetOf(r: oauth.TokenEndpointResponse, now = Date.now()): TokenSet {
  return {
    accessToken: r.access_token,
    refreshToken: r.refresh_token,
    // expires_in <= 0 is not a lifetime anyone means: treated as "no expiry given" rather than "refresh forever".
    expiresAt: typeof r.expires_in === "number" && r.expires_in > 0 ? new Date(now + r.expires_in * 1000) : undefined,
    // RFC 6749 says space-separated; some providers answer with commas.
    scopes: typeof r.scope === "string" ? r.scope.split(/[\s,]+/).filter(Boolean) : undefined,
    tokenType: r.token_type,
  };
}

/**
 * Token endpoints as oauth4webapi expects them, reached through the provider's HTTP path (guard, cap, timeout). Two
 * common, harmless deviations are smoothed over here: a missing `token_type` (several providers omit it; every one of
 * ours issues bearer tokens) and an `id_token` we never asked for (oauth4webapi would validate it against an issuer
 * we do not track; we do not sign users in).
 */
export function tolerantTokenFetch(path: ProviderHttp, what: string, timeoutMs: number, env: ProviderEnv | undefined) {
  return async (url: string, init: RequestInit): Promise<Response> => {
    const form = init.body instanceof URLSearchParams ? init.body : new URLSearchParams(init.body ? String(init.body) : "");
    const r = await path.fetch(what, url, {
      method: (init.method ?? "POST") as "POST", form, timeoutMs, env, headers: Object.fromEntries(new Headers(init.headers).entries()),
    });
    return tolerated(new Response([204, 205, 304].includes(r.status) ? null : r.text, { status: r.status, headers: r.headers }));
  };
}

async function tolerated(res: Response): Promise<Response> {
  if (res.status !== 200 || !/json/i.test(res.headers.get("content-type") ?? "")) return res;
  const text = await res.text();
  const headers = { "content-type": res.headers.get("content-type")! };
  let body: unknown;
  try { body = JSON.parse(text); } catch { return new Response(text, { status: res.status, headers }); }
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const o = body as Record<string, unknown>;
    delete o.id_token;
    if (o.token_type === undefined && typeof o.access_token === "string") o.token_type = "bearer";
  }
  return new Response(JSON.stringify(body), { status: res.status, headers });
}
