import crypto from "node:crypto";
import { ID_PATTERN } from "@trendgate/contracts";

// Briefing links: the source_link of trend events, a page anyone holding the link may read without an API key.
// The token is <base64url payload>.<base64url HMAC-SHA256 of that payload>; the payload is the JSON array
// [version, account id, trend id, issued at (ms), expires at (ms)]. Milliseconds, so a link issued right after a
// revocation (accounts.briefing_links_revoked_before) is not mistaken for one issued before it.
// The key is derived from ENCRYPTION_KEY (HKDF), so the worker that issues links and the gateway that opens them
// share it without a new secret, and it is never the key that seals secrets at rest.

const VERSION = 1;
const HKDF_INFO = "trendgate briefing links";
const MAX_TOKEN_CHARS = 512; // real tokens are about 190 characters

export type BriefingKey = Buffer;

/** The signing key of briefing links, from the base64 ENCRYPTION_KEY (32 bytes). */
export function briefingLinkKey(encryptionKey: string): BriefingKey {
  const ikm = Buffer.from(encryptionKey, "base64");
  if (ikm.length !== 32) throw new Error("ENCRYPTION_KEY must decode to 32 bytes");
  return Buffer.from(crypto.hkdfSync("sha256", ikm, Buffer.alloc(0), HKDF_INFO, 32));
}

export interface BriefingLinkClaims {
  accountId: string;
  trendId: string;
  issuedAt: Date;
  expiresAt: Date;
}

export type BriefingTokenFailure = "malformed" | "bad_signature" | "expired";
export type BriefingVerification = ({ ok: true } & BriefingLinkClaims) | { ok: false; reason: BriefingTokenFailure };

const sign = (key: BriefingKey, payload: string) => crypto.createHmac("sha256", key).update(payload).digest();

/** A token for one trend of one account, valid from issuedAt for ttlSeconds. */
export function briefingToken(key: BriefingKey, o: { accountId: string; trendId: string; issuedAt: Date; ttlSeconds: number }): string {
  const iat = o.issuedAt.getTime();
  const payload = Buffer.from(JSON.stringify([VERSION, o.accountId, o.trendId, iat, iat + o.ttlSeconds * 1000])).toString("base64url");
  return `${payload}.${sign(key, payload).toString("base64url")}`;
}

/** `${publicBaseUrl}/briefings/<token>`: the page of trend `trendId`, readable without an API key until it expires or is revoked. */
export function briefingUrl(publicBaseUrl: string, key: BriefingKey, o: { accountId: string; trendId: string; issuedAt: Date; ttlSeconds: number }): string {
  return `${publicBaseUrl.replace(/\/+$/, "")}/briefings/${briefingToken(key, o)}`;
}

/**
 * The claims of a token this key signed and that has not expired at `now`. Revocation is not checked here (it needs
 * the account row): see loadBriefing.
 */
export function verifyBriefingToken(key: BriefingKey, token: string, now: Date): BriefingVerification {
  const m = token.length <= MAX_TOKEN_CHARS ? /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token) : null;
  if (!m) return { ok: false, reason: "malformed" };
  const [, payload, mac] = m;
  // Compared as text (decoding would accept the 4 spellings of the last character), before the payload is even
  // parsed: nothing an outsider wrote is interpreted.
  if (!crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(sign(key, payload).toString("base64url")))) return { ok: false, reason: "bad_signature" };
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (!Array.isArray(claims) || claims.length !== 5) return { ok: false, reason: "malformed" };
  const [v, accountId, trendId, iat, exp] = claims;
  if (v !== VERSION || typeof accountId !== "string" || !ID_PATTERN.test(accountId) || typeof trendId !== "string" || !ID_PATTERN.test(trendId)
    || !Number.isSafeInteger(iat) || !Number.isSafeInteger(exp) || exp < iat) return { ok: false, reason: "malformed" };
  if (now.getTime() >= exp) return { ok: false, reason: "expired" };
  return { ok: true, accountId, trendId, issuedAt: new Date(iat), expiresAt: new Date(exp) };
}
