import { createHash } from "node:crypto";
import type { RedditClient } from "./client.ts";

// Reddit's app-only tokens last an hour; asking for one per poll would spend a token request every few minutes and
// Reddit asks clients not to. Each worker process keeps the token it was issued (keyed by a hash of the token host
// and the app's credentials, so a changed secret gets a new one) until a minute before it lapses.

const MARGIN_MS = 60_000;
const cache = new Map<string, { accessToken: string; expiresAt: number }>();

const keyOf = (authUrl: string, clientId: string, secret: string) => createHash("sha256").update(`${authUrl}\n${clientId}\n${secret}`).digest("hex");

/** A token for the app: the one this process holds while it is valid, else a new one. */
export async function appToken(reddit: RedditClient, authUrl: string, clientId: string, secret: string) {
  const key = keyOf(authUrl, clientId, secret);
  const held = cache.get(key);
  if (held && held.expiresAt - MARGIN_MS > Date.now()) return { accessToken: held.accessToken, cached: true };
  const issued = await reddit.clientCredentialsToken(clientId, secret);
  cache.set(key, { accessToken: issued.accessToken, expiresAt: issued.expiresAt.getTime() });
  return { accessToken: issued.accessToken, cached: false };
}

/** Forgets the app's held token (Reddit refused it before its time: revoked). */
export function forgetAppToken(authUrl: string, clientId: string, secret: string) {
  cache.delete(keyOf(authUrl, clientId, secret));
}
