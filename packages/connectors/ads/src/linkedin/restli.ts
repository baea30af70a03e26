// Rest.li 2.0 URL encoding (X-Restli-Protocol-Version: 2.0.0), how LinkedIn takes structured query parameters:
// records as `(key:value,...)`, arrays as `List(a,b)`, and every key and string percent-encoded INCLUDING the
// characters the syntax uses (`(`, `)`, `,`, `:`, `'`), so `urn:li:geo:1` travels as `urn%3Ali%3Ageo%3A1`. The
// result is already URL-safe: it goes into the query string as is (URLSearchParams would encode it a second time).

const escape = (s: string) => encodeURIComponent(s).replace(/[()'!*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function restli(value: unknown): string {
  if (Array.isArray(value)) return `List(${value.map(restli).join(",")})`;
  if (value && typeof value === "object") return `(${Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => `${escape(k)}:${restli(v)}`).join(",")})`;
  const s = String(value);
  return s === "" ? "''" : escape(s);
}

/** A query string of Rest.li-encoded parameters (plain strings are encoded the same way). */
export const restliQuery = (params: Record<string, unknown>) =>
  Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${escape(k)}=${restli(v)}`).join("&");
