import { ProviderError, type ProviderEnv, type ProviderResponse } from "@trendgate/connector-core";
import { DEFAULTS, env as ENV } from "./manifest.ts";
import { PROVIDER, teamsError } from "./errors.ts";
import { http } from "./http.ts";

// The bot's side: a client-credentials token for the Bot Framework Connector
// (https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-authentication), cached per
// app until shortly before it expires (tokens last an hour; fetching one per card would be slow and throttled), and
// one call to the Connector with it (connector() below says what a 401 does). The token comes from the tenant of the
// bot's app registration: Azure has created only single-tenant and managed-identity bots since 2025-07-31, and the
// multi-tenant endpoint (tenant `botframework.com`) answers those AADSTS700016, so it is used only when named.

const TIMEOUT_MS = 15_000;
const SCOPE = "https://api.botframework.com/.default";
/** Refresh this long before the token's own expiry: a token must not lapse between our check and Microsoft's. */
const EARLY_MS = 5 * 60_000;

const cache = new Map<string, { token: string; until: number }>();

/** A tenant as the identity platform takes it in a path: its GUID or one of its domains (e.g. botframework.com). */
const TENANT = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})$/i;

export interface BotSettings { appId: string; appPassword: string; tokenUrl: string; serviceUrl: string; env?: ProviderEnv }

/** The bot settings from configuration; a missing app id or password is a configuration error, said by name. */
export function botSettingsOf(env: ProviderEnv | undefined): BotSettings {
  const appId = env?.[ENV.appId];
  const appPassword = env?.[ENV.appPassword];
  if (!appId || !appPassword) {
    const missing = [!appId && ENV.appId, !appPassword && ENV.appPassword].filter(Boolean).join(" and ");
    throw new ProviderError(PROVIDER, "bad_request", `the bot is not configured: set ${missing}`, { status: null, providerCode: "bot_not_configured" });
  }
  const tenant = env?.[ENV.botTenantId];
  const notConfigured = (why: string) => new ProviderError(PROVIDER, "bad_request", `the bot is not configured: ${why}`, { status: null, providerCode: "bot_not_configured" });
  if (tenant && !TENANT.test(tenant)) throw notConfigured(`${ENV.botTenantId} is neither a tenant id nor a tenant domain`);
  const tokenUrl = env?.[ENV.botTokenUrl] || (tenant && DEFAULTS.botTokenUrl.replace("{tenant}", tenant));
  if (!tokenUrl) throw notConfigured(`set ${ENV.botTenantId} (the tenant of the bot's app registration; botframework.com for a multi-tenant bot)`);
  const serviceUrl = env?.[ENV.serviceUrl] || DEFAULTS.serviceUrl;
  return { appId, appPassword, tokenUrl, serviceUrl: serviceUrl.endsWith("/") ? serviceUrl : `${serviceUrl}/`, env };
}

/**
 * What to do about a refused token request. AADSTS700016 says the app is not in the directory asked: on the
 * multi-tenant endpoint that is a single-tenant bot (not a wrong password), elsewhere a wrong app id or tenant.
 */
function tokenHint(s: BotSettings, res: ProviderResponse): string {
  const codes: unknown = res.body?.error_codes;
  const notInDirectory = (Array.isArray(codes) && codes.includes(700016)) || /^AADSTS700016:/.test(String(res.body?.error_description ?? ""));
  if (!notInDirectory) return `check ${ENV.appId} and ${ENV.appPassword}`;
  if (!/^\/botframework\.com\//i.test(new URL(s.tokenUrl).pathname)) return `${ENV.appId} is not an app of that tenant: check ${ENV.appId} and ${ENV.botTenantId}`;
  const unset = s.env?.[ENV.botTokenUrl] ? ` and unset ${ENV.botTokenUrl}` : "";
  return `the bot is single-tenant, its token comes from its own tenant: set ${ENV.botTenantId} to the tenant of its app registration${unset}`;
}

async function botToken(s: BotSettings, now = Date.now()): Promise<string> {
  const key = `${s.tokenUrl} ${s.appId}`;
  const hit = cache.get(key);
  if (hit && hit.until > now) return hit.token;
  const res = await http.fetch("bot token", s.tokenUrl, {
    env: s.env, method: "POST", timeoutMs: TIMEOUT_MS,
    form: new URLSearchParams({ grant_type: "client_credentials", client_id: s.appId, client_secret: s.appPassword, scope: SCOPE }),
  });
  if (res.status !== 200 || typeof res.body?.access_token !== "string") {
    throw teamsError(res, "bot token", "bot_token", tokenHint(s, res));
  }
  const lifetimeMs = (Number(res.body.expires_in) > 0 ? Number(res.body.expires_in) : 3600) * 1000;
  cache.set(key, { token: res.body.access_token, until: now + Math.max(0, lifetimeMs - EARLY_MS) });
  return res.body.access_token;
}

/** Forgets cached bot tokens (tests; a changed password). */
export const forgetBotTokens = () => cache.clear();

/**
 * One Connector call (`path` below the service URL, e.g. `v3/conversations`); a failure is thrown mapped, with
 * `hint` saying what a person can do about a 403 (the bot is not in the team). A 401 is answered before anything is
 * done, so it is sent once more with a fresh token (a cached one Microsoft no longer takes, e.g. after a key roll);
 * refused again, the app's credentials are wrong: `bad_request` (a configuration error, not the tenant's connection).
 */
export async function connector(s: BotSettings, what: string, method: "POST" | "PUT", path: string, json: unknown, hint?: string): Promise<ProviderResponse> {
  let res = await send(s, what, method, path, json);
  if (res.status === 401) {
    cache.delete(`${s.tokenUrl} ${s.appId}`);
    res = await send(s, what, method, path, json);
    if (res.status === 401) cache.delete(`${s.tokenUrl} ${s.appId}`);
  }
  if (res.status >= 200 && res.status < 300) return res;
  throw teamsError(res, what, "bot", res.status === 403 ? hint : res.status === 401 ? `the Bot Framework refused the bot's token; check ${ENV.appId} and ${ENV.appPassword}` : undefined);
}

async function send(s: BotSettings, what: string, method: "POST" | "PUT", path: string, json: unknown): Promise<ProviderResponse> {
  const token = await botToken(s);
  return http.fetch(what, new URL(path, s.serviceUrl), { env: s.env, method, json, timeoutMs: TIMEOUT_MS, headers: { authorization: `Bearer ${token}` } })
    .catch((e: unknown) => {
      // A post sent in full and not answered may be in the channel already, and the Connector takes no idempotency
      // key: sending it again could show it twice. An edit (PUT) is safe to repeat.
      if (method === "POST" && e instanceof ProviderError && e.detail.providerCode === "timeout") {
        throw new ProviderError(PROVIDER, "unavailable", `${what}: request failed (timeout), it may have been posted`, { ...e.detail, mayHaveActed: true });
      }
      throw e;
    });
}
