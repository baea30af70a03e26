import { createRemoteJWKSet, customFetch, errors, jwtVerify, type FetchImplementation, type JWK, type JWTVerifyGetKey, type RemoteJWKSet } from "jose";
import { ID_PATTERN } from "@trendgate/contracts";
import type { ProviderEnv } from "@trendgate/connector-core";
import type { ChatFeedbackVerdict, ChatInteraction, ChatInteractions, ChatVerdict, OperatorAction } from "../kind.ts";
import { ACTION_VERB_PREFIX, APPROVE_VERB, FEEDBACK_VERB_PREFIX, SNOOZE_BUTTON_MINUTES } from "./cards.ts";
import { http } from "./http.ts";
import { DEFAULTS, env as ENV } from "./manifest.ts";

// A press on a card's Action.Execute button arrives as an `invoke` activity named `adaptiveCard/action`, POSTed by
// the Bot Framework with `Authorization: Bearer <JWT>`. Verification follows
// https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-authentication (Bot Connector
// to bot): the signing keys are the JWKS the OpenID metadata names (cached, refetched by jose when an unknown key id
// appears), RS256, issuer https://api.botframework.com, audience our app id (TEAMS_APP_ID, the value passed as the
// "signing secret"), not expired (5 minutes of clock skew either way), and its `serviceUrl` claim equal to the
// activity's, so a token captured for one activity cannot vouch for a body pointing elsewhere. Then the channel: the
// activity's `channelId` must be `msteams` (only Teams writes the tenant a press is checked against; Web Chat and
// Direct Line users write their own bodies) and among the `endorsements` the JWKS lists for the signing key, or the
// request is refused as forbidden (403): a key endorsed for other channels only, or for none, vouches for no Teams
// activity. Only `serviceUrl` and `channelId` are read from the body before the token is checked; parse() trusts the
// body only after. A press is the invoke, or the message activity of the Action.Submit each button falls back to on
// clients without Universal Actions (cards.ts). The replies are Universal Actions invoke responses (Teams shows none
// for a message activity).

export const BOT_FRAMEWORK_ISSUER = "https://api.botframework.com";
export const CLOCK_TOLERANCE_SECONDS = 300;
/** How long the OpenID metadata (where the keys are) is kept; the keys themselves are jose's to refresh. */
const METADATA_TTL_MS = 24 * 3_600_000;

const ACTIONS = new Set<OperatorAction>(["acknowledge", "resolve", "snooze", "reopen", "mute"]);
const VERDICTS = new Set<ChatFeedbackVerdict>(["not_a_trend", "useful"]);
const PLAN_HASH = /^[\x21-\x7e]{1,200}$/;

/** Teams' channel id in activities and in the keys' endorsements. */
export const TEAMS_CHANNEL_ID = "msteams";

/** The metadata's key set per metadata URL; a failed load is not kept, so the next request tries again. */
const keySets = new Map<string, { keys: Promise<RemoteJWKSet>; until: number }>();

/** Key-set downloads go through the provider's HTTP path (SSRF guard, timeouts, size cap) like every other call. */
const guardedFetch = (env: ProviderEnv | undefined): FetchImplementation => async (url, init) => {
  const r = await http.fetch("signing keys", url, { method: "GET", env, signal: init.signal, headers: { ...Object.fromEntries(init.headers.entries()), accept: "application/json" } });
  return new Response(r.text, { status: r.status, headers: r.headers });
};

async function loadKeys(metadataUrl: string, env: ProviderEnv | undefined): Promise<RemoteJWKSet> {
  const res = await http.fetch("OpenID metadata", metadataUrl, { method: "GET", env, timeoutMs: 10_000 });
  const jwksUri = res.body?.jwks_uri;
  if (res.status !== 200 || typeof jwksUri !== "string") throw new Error(`the OpenID metadata at ${metadataUrl} answered HTTP ${res.status} without a jwks_uri`);
  return createRemoteJWKSet(new URL(jwksUri), { [customFetch]: guardedFetch(env) });
}

function keysFor(env: ProviderEnv | undefined, now = Date.now()): Promise<RemoteJWKSet> {
  const url = env?.[ENV.openIdMetadataUrl] || DEFAULTS.openIdMetadataUrl;
  const hit = keySets.get(url);
  if (hit && hit.until > now) return hit.keys;
  const keys = loadKeys(url, env);
  keySets.set(url, { keys, until: now + METADATA_TTL_MS });
  keys.catch(() => keySets.delete(url));
  return keys;
}

/** Forgets the cached key sets (tests). */
export const forgetSigningKeys = () => keySets.clear();

function bearer(headers: Record<string, string | string[] | undefined>): string | null | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === "authorization");
  const v = key === undefined ? undefined : headers[key];
  if (Array.isArray(v)) return v.length === 1 ? v[0] : null; // sent twice: refuse rather than pick one
  return v;
}

const REASONS: Record<string, string> = {
  ERR_JWT_EXPIRED: "the token has expired",
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: "signature mismatch",
  ERR_JWKS_NO_MATCHING_KEY: "no signing key matches the token",
  ERR_JWS_INVALID: "the token is not a JWS",
  ERR_JWT_INVALID: "the token is not a JWT",
  ERR_JOSE_ALG_NOT_ALLOWED: "the token's algorithm is not RS256",
};

export async function verifyTeamsRequest(
  headers: Record<string, string | string[] | undefined>, rawBody: Buffer, appId: string, now: Date = new Date(), env?: ProviderEnv,
): Promise<ChatVerdict> {
  if (!appId) return { ok: false, reason: `no app id is configured (${ENV.appId})` };
  const auth = bearer(headers);
  if (auth === null) return { ok: false, reason: "Authorization sent more than once" };
  const token = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(auth ?? "")?.[1];
  if (!token) return { ok: false, reason: "missing Authorization: Bearer <token>" };
  let serviceUrl: unknown;
  let channelId: unknown;
  try { ({ serviceUrl, channelId } = JSON.parse(rawBody.toString("utf8")) ?? {}); } catch { return { ok: false, reason: "the body is not JSON" }; }
  if (typeof serviceUrl !== "string" || !serviceUrl) return { ok: false, reason: "the activity names no serviceUrl" };

  let keys: RemoteJWKSet;
  try { keys = await keysFor(env); } catch (e) { return { ok: false, reason: `signing keys unavailable (${(e as Error).message})` }; }
  // The JWK that verified the token, taken from the set jose picked it from, for its endorsements.
  let signedWith: (JWK & { endorsements?: unknown }) | undefined;
  const getKey: JWTVerifyGetKey = async (header, jws) => {
    const key = await keys(header, jws);
    const matching = (keys.jwks()?.keys ?? []).filter((k) => k.kid === header.kid && k.kty === "RSA" && (k.use ?? "sig") === "sig");
    signedWith = matching.length === 1 ? matching[0] : undefined;
    return key;
  };
  try {
    const { payload } = await jwtVerify(token, getKey, {
      issuer: BOT_FRAMEWORK_ISSUER, audience: appId, algorithms: ["RS256"], clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: now, requiredClaims: ["exp"],
    });
    if (payload.serviceUrl !== serviceUrl) return { ok: false, reason: "the token's serviceUrl is not the activity's" };
  } catch (e) {
    if (e instanceof errors.JWTClaimValidationFailed) return { ok: false, reason: `claim ${e.claim} is not valid (${e.reason})` };
    const code = (e as { code?: string }).code;
    return { ok: false, reason: (code && REASONS[code]) ?? `the token was refused (${code ?? (e as Error).name})` };
  }
  if (channelId !== TEAMS_CHANNEL_ID) return { ok: false, forbidden: true, reason: `the activity's channelId is ${JSON.stringify(channelId ?? null)}, not ${TEAMS_CHANNEL_ID}` };
  const endorsements = Array.isArray(signedWith?.endorsements) ? signedWith.endorsements.filter((x): x is string => typeof x === "string") : [];
  if (!endorsements.includes(channelId)) {
    return { ok: false, forbidden: true, reason: `the signing key is not endorsed for ${channelId} (endorsements: ${endorsements.join(", ") || "none"})` };
  }
  return { ok: true };
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);

/** The verb and data of a press: an Action.Execute invoke, or the message an Action.Submit fallback sends (its `value`). */
function pressOf(a: any): { verb: unknown; data: any } | null {
  if (a?.type === "invoke" && a.name === "adaptiveCard/action" && a.value?.action?.type === "Action.Execute") return { verb: a.value.action.verb, data: a.value.action.data };
  if (a?.type === "message" && a.value && typeof a.value === "object" && !Array.isArray(a.value)) return { verb: a.value.verb, data: a.value };
  return null;
}

/** A press on one of our cards' buttons; null for anything else (other invokes, messages, other cards). */
export function parseTeamsInteraction(rawBody: Buffer): ChatInteraction | null {
  let a: any;
  try { a = JSON.parse(rawBody.toString("utf8")); } catch { return null; }
  const press = pressOf(a);
  if (!press) return null;
  const verb = str(press.verb);
  const data = press.data;
  const itemId = str(data?.item_id);
  if (!verb || !itemId || !ID_PATTERN.test(itemId)) return null;
  const userId = str(a.from?.aadObjectId) ?? str(a.from?.id);
  const teamId = str(a.conversation?.tenantId) ?? str(a.channelData?.tenant?.id);
  if (!userId || !teamId) return null;
  const name = str(a.from?.name);
  const user = { id: userId, ...(name ? { name } : {}) };
  const version = Number.isSafeInteger(data.version) && data.version > 0 ? data.version as number : undefined;
  const common = { itemId, ...(version !== undefined ? { version } : {}), user, teamId };

  // The verb and the data must agree: each is what our card put there, and a press that says two things is not ours.
  if (verb.startsWith(FEEDBACK_VERB_PREFIX)) {
    const verdict = verb.slice(FEEDBACK_VERB_PREFIX.length) as ChatFeedbackVerdict;
    return VERDICTS.has(verdict) && data.verdict === verdict ? { itemId, feedback: verdict, user, teamId } : null;
  }
  if (verb === APPROVE_VERB) {
    const planId = str(data.plan_id);
    const planHash = str(data.plan_hash);
    if (data.action !== "approve" || !planId || !ID_PATTERN.test(planId) || !planHash || !PLAN_HASH.test(planHash)) return null;
    return { ...common, approve: { planId, planHash } };
  }
  if (!verb.startsWith(ACTION_VERB_PREFIX)) return null;
  const action = verb.slice(ACTION_VERB_PREFIX.length) as OperatorAction;
  if (!ACTIONS.has(action) || data.action !== action) return null;
  if (action !== "snooze") return { ...common, action };
  const m = data.snooze_minutes;
  return { ...common, action, snoozeMinutes: Number.isSafeInteger(m) && m > 0 && m <= 7 * 24 * 60 ? m : SNOOZE_BUTTON_MINUTES };
}

/** A Universal Actions invoke response showing `text` to the presser; the card stays as it is until we update it. */
const message = (text: string) => ({ statusCode: 200, type: "application/vnd.microsoft.activity.message", value: text });

export const teamsInteractions: ChatInteractions = {
  signingSecretEnv: ENV.appId,
  verify: verifyTeamsRequest,
  parse: parseTeamsInteraction,
  fromWorkspaceOf: (it, account) => typeof account.tenant_id === "string" && account.tenant_id.toLowerCase() === it.teamId.toLowerCase(),
  privateReply: message,
  // Teams wants an invoke response to every press (an empty 200 shows the presser an error). The refreshed card goes
  // to everyone through the outbox (updateCard); this short text only tells the presser it was taken.
  appliedReply: () => message("Done. The card is being updated."),
};
