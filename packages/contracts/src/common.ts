import { z } from "zod";

// ---- Strings -------------------------------------------------------------------------------------------------------
// Every string a request carries goes through `text()` (or a schema built on it): Postgres cannot store a NUL
// character (22021) and JSON text with a lone UTF-16 surrogate is not valid Unicode (it cannot be stored or sent on),
// so both are refused here, field by field, instead of failing later in a database or a provider. A test walks the
// route registry and fails on any request string schema without this check (tests/security/contracts.test.ts).
export const storableText = z.superRefine((s: string, ctx) => {
  if (s.includes("\u0000")) ctx.addIssue({ code: "custom", message: "must not contain the NUL character (\\u0000)", input: s });
  else if (!s.isWellFormed()) ctx.addIssue({ code: "custom", message: "must be valid Unicode (contains a lone UTF-16 surrogate)", input: s });
});

/** A request string that can be stored and sent on. `trim` removes surrounding white space first. */
export const text = (opts: { min?: number; max: number; trim?: boolean }) => {
  let s = z.string();
  if (opts.trim) s = s.trim();
  s = s.check(storableText);
  if (opts.min !== undefined) s = s.min(opts.min);
  return s.max(opts.max);
};

// ---- HTTP headers a user gives us to send (a webhook's custom headers, a workflow trigger's credential) -----------
export const HttpHeaderName = z.string().check(storableText).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "an HTTP header name (letters, digits, - and a few symbols)");
export const HttpHeaderValue = z.string().check(storableText).regex(/^[\x20-\x7e]{1,2000}$/, "1-2000 printable ASCII characters (no line breaks)");

/**
 * Headers a user may not have us send: those every outbound request carries (signature, event, content), and
 * hop-by-hop ones an HTTP client decides. Compared in lower case; `x-webhook-`, `webhook-` and `x-trendgate-` are prefixes.
 */
export const RESERVED_HEADERS = [
  "host", "content-length", "content-type", "content-encoding", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
  "trailer", "expect", "user-agent", "proxy-authorization", "proxy-connection", "cookie",
] as const;
export const RESERVED_HEADER_PREFIXES = ["webhook-", "x-webhook-", "x-trendgate-"] as const;
/** Whether a header name is one the service sets itself (RESERVED_HEADERS, RESERVED_HEADER_PREFIXES). */
export const isReservedHeader = (name: string) => {
  const n = name.toLowerCase();
  return (RESERVED_HEADERS as readonly string[]).includes(n) || RESERVED_HEADER_PREFIXES.some((p) => n.startsWith(p));
};
/**
 * The name of a header a user gives us to send (a webhook's custom headers, a workflow push's header credential): an
 * HTTP token (RFC 9110 tchar) that is not reserved.
 */
export const SendableHeaderName = HttpHeaderName
  .refine((n) => !isReservedHeader(n),
    { message: `a header the service sets itself (${RESERVED_HEADERS.join(", ")}, ${RESERVED_HEADER_PREFIXES.map((p) => `${p}*`).join(", ")})` });

// ---- Instants ------------------------------------------------------------------------------------------------------
// ISO 8601 instants (UTC, `Z`) between 1970-01-01 and 9999-12-31 (Postgres and JavaScript agree on every instant in between;
// year 0000 and six-digit years are refused instead of failing in the database).
const MIN_INSTANT = Date.UTC(1970, 0, 1);
const MAX_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export const Timestamp = z.iso
  .datetime()
  .check(storableText)
  .refine((s) => { const t = Date.parse(s); return Number.isNaN(t) || (t >= MIN_INSTANT && t <= MAX_INSTANT); }, "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z")
  .meta({ description: "ISO 8601, UTC", example: "2026-11-22T06:00:00.000Z" });

/** An instant no later than `maxAheadSeconds` from now (clock skew allowance for observations). */
export const pastInstant = (maxAheadSeconds: number) =>
  Timestamp.refine((s) => !(Date.parse(s) > Date.now() + maxAheadSeconds * 1000), `must not be more than ${maxAheadSeconds} seconds in the future`);

/** An instant after now (expiry times: a key or grant already expired is refused). */
export const futureInstant = Timestamp.refine((s) => !(Date.parse(s) <= Date.now()), "must be in the future"); // NaN: reported as a format error

// ---- Numbers in queries and paths ----------------------------------------------------------------------------------
/** A query integer written as plain decimal digits (no sign, hex, exponent or white space): `limit=20`. */
export const decimalInt = (min: number, max: number) =>
  z.string()
    .check(storableText)
    .regex(/^\d{1,9}$/, "must be a whole number written in decimal digits")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

// ---- Ids and pages -------------------------------------------------------------------------------------------------
/** Our ids: `<type>_<26-character ULID>` in lower case (packages/db/src/ids.ts). */
export const ID_PATTERN = /^[a-z]{2,12}_[0-9a-z]{26}$/;
export const Id = z.string().check(storableText).regex(ID_PATTERN, "not an id of this service").meta({ example: "wh_01kaq3m2b4c5d6e7f8g9h0jkmn" });

// Cursor pagination, one rule for every list endpoint: newest first, `next_cursor` is null on the last page. `limit`
// is decimal digits within the listing's maximum; `cursor` is either an id of the listing's own type(s) (keyset
// listings: ids are time-ordered), or an opaque token the route opens with the gateway's sealed-cursor helper (a
// provider's cursor, a computed position), which refuses one made for another listing. The router refuses to
// mount a list route (an answer with `next_cursor`) whose query does not use these fields.
const pageFields = new WeakSet<z.ZodType>();
const pageField = <T extends z.ZodType>(s: T): T => { pageFields.add(s); return s; };
/** Whether a query field is one of the shared paging fields (checked by the router). */
export const isPageField = (s: unknown) => !!s && pageFields.has(s as z.ZodType);

export const pageLimit = (defaults: { limit: number; max: number }) =>
  pageField(decimalInt(1, defaults.max).optional().transform((v) => v ?? defaults.limit)
    .meta({ description: `Page size (default ${defaults.limit}, maximum ${defaults.max})` }));

/** `{ ids }`: a keyset cursor, an id of one of these types (`wh`: `wh_<ulid>`); `"opaque"`: a sealed token. */
export type CursorKind = { ids: string[] } | "opaque";
export const pageCursor = (kind: CursorKind) =>
  pageField(kind === "opaque"
    ? z.string().check(storableText).max(4096).regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)?$/, "not a next_cursor of this listing").optional()
      .meta({ description: "`next_cursor` of the previous page, as given" })
    : z.string().check(storableText).regex(new RegExp(`^(${kind.ids.join("|")})_[0-9a-z]{26}$`), "not a next_cursor of this listing").optional()
      .meta({ description: "`next_cursor` of the previous page" }));

export const pageQuery = (defaults: { limit: number; max: number; cursor: CursorKind }) =>
  z.object({ limit: pageLimit(defaults), cursor: pageCursor(defaults.cursor) });

export const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last page" }),
  });

export const IdParam = z.object({ id: Id });

// ---- Outbound URLs -------------------------------------------------------------------------------------------------
/**
 * The one rule for every URL a user gives us to call (webhook destinations, provider base URLs): http or https,
 * a host, a port in 1-65535, no user:password@, no backslash (parsers disagree on it), at most 2,048 characters.
 * The value is normalised (WHATWG URL serialisation), so what is stored, shown and called is the same string.
 * Whether the host may be reached is the outbound guard's call, at creation and again at each connection.
 */
export const OutboundUrl = text({ max: 2048, trim: true })
  .superRefine((s, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: "custom", message, input: s });
    if (s.includes("\\")) return fail("must not contain a backslash");
    let u: URL;
    try { u = new URL(s); } catch { return fail("must be an absolute http:// or https:// URL"); }
    if (u.protocol !== "http:" && u.protocol !== "https:") return fail("must be an http:// or https:// URL");
    if (!u.hostname) return fail("must name a host");
    if (u.username || u.password) return fail("must not contain credentials (user:password@)");
    if (u.port === "0") return fail("port must be between 1 and 65535"); // 65536+ does not parse
  })
  // WHATWG serialisation, except that a bare origin keeps no trailing "/" (the same request either way, and provider
  // base URLs get paths appended to them).
  .transform((s) => { const u = new URL(s); return u.pathname === "/" && !u.search && !u.hash && !s.endsWith("/") ? u.href.slice(0, -1) : u.href; })
  .meta({ description: "An http:// or https:// URL without credentials; stored normalised", example: "https://hooks.example.com/trendgate" });

/** An enum whose OpenAPI description lists each value with its meaning (one source for both). */
export const documentedEnum = <K extends string>(values: Record<K, string>) =>
  z.enum(Object.keys(values) as [K, ...K[]]).meta({
    description: Object.entries(values).map(([k, v]) => `\`${k}\`: ${v}`).join("; "),
  });

/** A query filter of comma-separated values from a fixed list (`state=open,snoozed`), as an array. */
export const csvEnum = <T extends string>(values: readonly T[]) =>
  z.string().check(storableText).transform((s, ctx) => {
    const parts = s.split(",").map((x) => x.trim()).filter(Boolean);
    const bad = parts.filter((p) => !values.includes(p as T));
    if (bad.length) ctx.addIssue({ code: "custom", message: `unknown value(s) ${bad.join(", ")}; use ${values.join(", ")}` });
    return parts as T[];
  });
