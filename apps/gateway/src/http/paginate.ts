import crypto from "node:crypto";
import { ApiError } from "./api-error.ts";

/**
 * Keyset pagination for every list endpoint: ids are time-ordered, so "newest first, after cursor X" is `id < X`.
 * Fetches one row more than the page to know whether a next page exists.
 */
export async function keysetPage<R, T extends { id: string }>(
  query: { limit: number; cursor?: string },
  fetch: (page: { after: { id?: { lt: string } }; orderBy: { id: "desc" }; take: number }) => Promise<R[]>,
  map: (row: R) => T,
): Promise<{ data: T[]; next_cursor: string | null }> {
  const rows = await fetch({ after: query.cursor ? { id: { lt: query.cursor } } : {}, orderBy: { id: "desc" }, take: query.limit + 1 });
  const data = rows.slice(0, query.limit).map(map);
  return { data, next_cursor: rows.length > query.limit ? data.at(-1)!.id : null };
}

/** The one refusal of a cursor that is not a `next_cursor` of the listing it was sent to. */
export const invalidCursor = () => new ApiError("validation_failed", "cursor: not a next_cursor of this listing (pass next_cursor back as given)", {
  errors: [{ location: "query", path: "cursor", message: "not a next_cursor of this listing", code: "invalid_cursor" }],
});

const cursorKeys = new Map<string, Buffer>();
const macOf = (secret: string, listing: string, payload: string) => {
  let key = cursorKeys.get(secret);
  if (!key) cursorKeys.set(secret, (key = crypto.createHmac("sha256", secret).update("trendgate paging cursor").digest()));
  return crypto.createHmac("sha256", key).update(`${listing}\n${payload}`).digest().subarray(0, 16);
};

/**
 * An opaque cursor (a provider's own cursor, a computed position): the value, and a MAC over it and the listing it
 * pages (e.g. `chat-channels:<account>`). So a cursor is only ever used by the listing that made it, and a provider
 * is never sent a cursor we did not get from it. `secret`: the server's ENCRYPTION_KEY.
 */
export function sealCursor(secret: string, listing: string, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${payload}.${macOf(secret, listing, payload).toString("base64url")}`;
}

/** The value sealed in `raw` for this listing; 422 naming `cursor` for anything else. */
export function openCursor<T>(secret: string, listing: string, raw: string): T {
  const [payload, mac, ...rest] = raw.split(".");
  const given = Buffer.from(mac ?? "", "base64url");
  const expected = macOf(secret, listing, payload);
  if (!rest.length && given.length === expected.length && crypto.timingSafeEqual(given, expected)) {
    try { return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as T; } catch { /* refused below */ }
  }
  throw invalidCursor();
}
