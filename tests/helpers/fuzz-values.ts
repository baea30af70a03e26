// Hostile values for the gateway fuzz test (tests/security/fuzz.test.ts), in the form they travel on the wire:
//   - body values are JSON *text* fragments (so `__proto__` keys, 1e309, -0 and 5,000-deep nesting really are sent),
//   - path segments and query strings are already percent-encoded (so malformed encodings really are sent).
// Each value has a class (`cls`) and a short label used in reports instead of the (possibly 100 kB) value itself.
import fc from "fast-check";

export interface Hostile {
  cls: string;
  label: string;
  /** JSON text (body), percent-encoded segment (path) or query-string fragment (query). */
  raw: string;
  /** Exact bytes to send instead of `raw` (bodies that are not even UTF-8). */
  bytes?: Buffer;
}

const j = (v: unknown) => JSON.stringify(v);
const DEPTH = 5_000;
const LONG = 100_000;

export const deepArray = (depth = DEPTH) => "[".repeat(depth) + "]".repeat(depth);
export const deepObject = (depth = DEPTH) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
export const deepMixed = (depth = DEPTH) => '[{"a":'.repeat(depth / 2) + "null" + "}]".repeat(depth / 2);

/** Strings that have broken services: encodings, invisible characters, numbers and dates written as text. */
export const HOSTILE_STRINGS: Hostile[] = [
  { cls: "nul", label: '"\\u0000"', raw: j("\u0000") },
  { cls: "nul", label: '"a\\u0000b"', raw: j("a\u0000b") },
  { cls: "lone-surrogate", label: '"\\ud800"', raw: j("\ud800") },
  { cls: "lone-surrogate", label: '"\\udfff"', raw: j("\udfff") },
  { cls: "lone-surrogate", label: '"a\\udc00b\\ud83d"', raw: j("a\udc00b\ud83d") },
  { cls: "long-string", label: '"a" x 100000', raw: j("a".repeat(LONG)) },
  { cls: "long-string", label: '"\\u00e9" x 100000', raw: j("\u00e9".repeat(LONG)) },
  { cls: "control", label: '"\\u0001\\u0007\\b\\t\\n\\r\\u001b\\u007f"', raw: j("\u0001\u0007\b\t\n\r\u001b\u007f") },
  { cls: "control", label: '"x\\r\\nX-Injected: 1"', raw: j("x\r\nX-Injected: 1") },
  { cls: "unicode", label: '"\\u202eevil\\u202c" (RTL override)', raw: j("\u202eevil\u202c") },
  { cls: "unicode", label: '"\\u200b\\u200d\\ufeff" (zero-width, BOM)', raw: j("\u200b\u200d\ufeff") },
  { cls: "unicode", label: '"\\u2028\\u2029"', raw: j("\u2028\u2029") },
  { cls: "unicode", label: '"\\ud83d\\ude00 e\\u0301 \\u65e5\\u672c"', raw: j("\ud83d\ude00 e\u0301 \u65e5\u672c") },
  { cls: "empty", label: '""', raw: j("") },
  { cls: "empty", label: '"   "', raw: j("   ") },
  { cls: "number-as-string", label: '"NaN"', raw: j("NaN") },
  { cls: "number-as-string", label: '"Infinity"', raw: j("Infinity") },
  { cls: "number-as-string", label: '"-0"', raw: j("-0") },
  { cls: "number-as-string", label: '"1e308"', raw: j("1e308") },
  { cls: "number-as-string", label: '"0x10"', raw: j("0x10") },
  { cls: "prototype-string", label: '"__proto__"', raw: j("__proto__") },
  { cls: "prototype-string", label: '"constructor"', raw: j("constructor") },
  { cls: "path-string", label: '"../../etc/passwd"', raw: j("../../etc/passwd") },
  { cls: "path-string", label: '"%00%ff%"', raw: j("%00%ff%") },
  { cls: "url", label: '"http://[::1]:0/"', raw: j("http://[::1]:0/") },
  { cls: "url", label: '"javascript:alert(1)"', raw: j("javascript:alert(1)") },
  { cls: "url", label: '"http://u:p@127.0.0.1\\\\@evil/"', raw: j("http://u:p@127.0.0.1\\@evil/") },
  { cls: "url", label: '"http://a\\u0000b/"', raw: j("http://a\u0000b/") },
  { cls: "url", label: '"http://\\ud800/"', raw: j("http://\ud800/") },
  { cls: "url", label: '"https://example.com:65536/"', raw: j("https://example.com:65536/") },
  { cls: "url", label: '"http://x/" + 3000 chars', raw: j("http://x/" + "a".repeat(3000)) },
];

/** Instants at and past the edges of what JavaScript and Postgres can represent, and impossible calendar dates. */
export const HOSTILE_DATES: Hostile[] = [
  "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "+275760-09-13T00:00:00Z", "-271821-04-20T00:00:00Z",
  "+275760-09-13T00:00:00.001Z", "2026-02-30T00:00:00Z", "2026-02-29T00:00:00Z", "2024-02-29T24:00:00Z",
  "1969-12-31T23:59:59.999Z", "-000001-01-01T00:00:00Z", "2026-11-22T06:00:00.0000000001Z", "2026-11-22T06:00:60Z",
  "2026-11-22T06:00:00+14:00", "2026-11-22", "1e308",
].map((d) => ({ cls: "date", label: j(d), raw: j(d) }));

/** Numbers past double precision, the safe-integer range, and the ones JSON.parse turns into something else. */
export const HOSTILE_NUMBERS: Hostile[] = [
  "1e308", "-1e308", "1e309", "-1e309", "-0", "0", "9007199254740993", "-9007199254740993", "4.9e-324", "1e-400",
  "0.5", "-1", "2147483648", "1.0000000000000002", "123456789012345678901234567890", "1E+2",
].map((n) => ({ cls: "number", label: n, raw: n }));

/** Objects that try to reach Object.prototype (sent as JSON text, so the keys are really there). */
export const HOSTILE_PROTO: Hostile[] = [
  { cls: "prototype", label: '{"__proto__":{"polluted":"yes"}}', raw: '{"__proto__":{"polluted":"yes"}}' },
  { cls: "prototype", label: '{"constructor":{"prototype":{"polluted":"yes"}}}', raw: '{"constructor":{"prototype":{"polluted":"yes"}}}' },
  { cls: "prototype", label: '{"prototype":{"polluted":"yes"}}', raw: '{"prototype":{"polluted":"yes"}}' },
  { cls: "prototype", label: '{"__proto__":null}', raw: '{"__proto__":null}' },
  { cls: "prototype", label: '[{"__proto__":{"polluted":"yes"}}]', raw: '[{"__proto__":{"polluted":"yes"}}]' },
  { cls: "prototype", label: '{"toString":1,"valueOf":1,"hasOwnProperty":1}', raw: '{"toString":1,"valueOf":1,"hasOwnProperty":1}' },
];

/** Size and depth: 5,000 levels of nesting, 100,000-element arrays, 10,000 keys. */
export const HOSTILE_HUGE: Hostile[] = [
  { cls: "deep", label: "[[[…]]] depth 5000", raw: deepArray() },
  { cls: "deep", label: '{"a":{"a":…}} depth 5000', raw: deepObject() },
  { cls: "deep", label: '[{"a":[{"a":…}]}] depth 5000', raw: deepMixed() },
  { cls: "huge", label: "[0,0,…] 100000 items", raw: "[" + new Array(LONG).fill("0").join(",") + "]" },
  { cls: "huge", label: '["a",…] 20000 strings', raw: j(new Array(20_000).fill("a")) },
  { cls: "huge", label: "{k0..k9999} 10000 keys", raw: j(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))) },
];

/** The wrong JSON type where another is expected. */
export const TYPE_CONFUSION: Hostile[] = [
  ["[]", "[]"], ["{}", "{}"], ["null", "null"], ["true", "true"], ["false", "false"], ["0", "0"], ['"0"', '"0"'], ['["a"]', '["a"]'], ['[{}]', "[{}]"],
].map(([label, raw]) => ({ cls: "type-confusion", label, raw }));

/** Every value that can replace a leaf (or a whole sub-tree) of a body. */
export const HOSTILE_BODY_VALUES: Hostile[] = [...HOSTILE_STRINGS, ...HOSTILE_DATES, ...HOSTILE_NUMBERS, ...HOSTILE_PROTO, ...HOSTILE_HUGE, ...TYPE_CONFUSION];

/** Keys injected into an object of the body: [raw JSON key text, raw JSON value text]. */
export const HOSTILE_KEYS: { cls: string; label: string; key: string; value: string }[] = [
  { cls: "prototype-key", label: '"__proto__":{"polluted":"yes"}', key: '"__proto__"', value: '{"polluted":"yes"}' },
  { cls: "prototype-key", label: '"__proto__":[]', key: '"__proto__"', value: "[]" },
  { cls: "prototype-key", label: '"constructor":{"prototype":{"polluted":"yes"}}', key: '"constructor"', value: '{"prototype":{"polluted":"yes"}}' },
  { cls: "prototype-key", label: '"prototype":{"polluted":"yes"}', key: '"prototype"', value: '{"polluted":"yes"}' },
  { cls: "odd-key", label: '"\\u0000":1', key: j("\u0000"), value: "1" },
  { cls: "odd-key", label: '"\\ud800":1', key: j("\ud800"), value: "1" },
  { cls: "odd-key", label: '"":1', key: '""', value: "1" },
  { cls: "odd-key", label: '"a" x 10000 : 1', key: j("a".repeat(10_000)), value: "1" },
];

/** Bodies that replace the whole request body (as text; some are not JSON at all). */
export const HOSTILE_WHOLE_BODIES: Hostile[] = [
  ...HOSTILE_HUGE, ...TYPE_CONFUSION, ...HOSTILE_PROTO,
  { cls: "type-confusion", label: '"a string"', raw: '"a string"' },
  { cls: "lone-surrogate", label: '"\\ud800" (root)', raw: j("\ud800") },
  { cls: "malformed-json", label: "{", raw: "{" },
  { cls: "malformed-json", label: "[1,]", raw: "[1,]" },
  { cls: "malformed-json", label: "NaN", raw: "NaN" },
  { cls: "malformed-json", label: "{'a':1}", raw: "{'a':1}" },
  { cls: "malformed-json", label: '{"a":1} trailing', raw: '{"a":1} trailing' },
  { cls: "malformed-json", label: "BOM + {}", raw: "\ufeff{}" },
  { cls: "malformed-json", label: '"\\x" bad escape', raw: '{"a":"\\x"}' },
  { cls: "malformed-json", label: "raw NUL byte in string", raw: '{"a":"\u0000"}' },
  { cls: "malformed-json", label: '{"a":"<bytes ff fe ed a0 80>"} (not UTF-8)', raw: "", bytes: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x22, 0x7d]) },
];

/** Path segments, already percent-encoded as they go on the wire. */
export const HOSTILE_PATH_SEGMENTS: Hostile[] = [
  ["malformed-percent", "%00"], ["malformed-percent", "%ff"], ["malformed-percent", "%"], ["malformed-percent", "%E0%A4%A"],
  ["malformed-percent", "%ED%A0%80"], ["malformed-percent", "%C0%AF"], ["malformed-percent", "%zz"], ["malformed-percent", "wh_%ff"],
  ["nul", "a%00b"], ["traversal", "..%2f.."], ["traversal", "..%2F..%2Fadmin"], ["traversal", "%2e%2e"], ["traversal", "a%2Fb"],
  ["traversal", "..%5c.."], ["control", "%0d%0aX-Injected:%201"], ["control", "%20"], ["control", "%09"],
  ["long-string", "a".repeat(65)], ["long-string", "a".repeat(4096)],
  ["unicode", encodeURIComponent("日本語")], ["unicode", "%F0%9F%98%80"], ["unicode", "%E2%80%AE"], ["unicode", "%E2%80%8B"],
  ["unicode", "%EF%BB%BF"], ["prototype-string", "__proto__"], ["prototype-string", "constructor"],
  ["prototype-string", "%5F%5Fproto%5F%5F"], ["type-confusion", "1e308"], ["type-confusion", "-0"], ["type-confusion", "null"],
  ["id-like", "WH_01KAQ3M2B4C5D6E7F8G9H0JKMN"], ["id-like", "wh_01kaq3m2b4c5d6e7f8g9h0jk%00n"],
  ["id-like", "wh_01kaq3m2b4c5d6e7f8g9h0jkmn%20"], ["id-like", "wh_01kaq3m2b4c5d6e7f8g9h0jkm%E2%80%8B"],
].map(([cls, raw]) => ({ cls, label: raw.length > 80 ? `${raw.slice(0, 12)}… (${raw.length} chars)` : raw, raw }));

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");

/** Cursor values that look like a next_cursor but are not (base64url JSON of odd shapes, extreme instants). */
export const GARBAGE_CURSORS: Hostile[] = [
  ["garbage", "AAAA"], ["garbage", "!!!!"], ["garbage", "%00"], ["garbage", b64("null")],
  ["garbage", b64(["2026-11-22T06:00:00.000Z", "tr\u0000x"])], ["garbage", b64(["-271821-04-20T00:00:00.000Z", "tr_x"])],
  ["garbage", b64(["+275760-09-13T00:00:00.000Z", "tr_x"])], ["garbage", b64(["0000-01-01T00:00:00.000Z", "tr_x"])],
  ["garbage", b64([1e308, "tr_x"])], ["garbage", b64([-1e308, "tr_\ud800"])], ["garbage", b64([1, { __proto__: 1 }])],
  ["garbage", b64('{"__proto__":{"polluted":"yes"}}')], ["garbage", b64(["2026-11-22T06:00:00.000Z"])], ["garbage", b64(deepArray(1000))],
  ["garbage", "wh_01kaq3m2b4c5d6e7f8g9h0jkmn"], ["garbage", "zz_zzzzzzzzzzzzzzzzzzzzzzzzzz"],
].map(([cls, raw]) => ({ cls, label: `cursor ${raw.length > 40 ? raw.slice(0, 40) + "…" : raw}`, raw: encodeURIComponent(raw).replace(/%2500/g, "%00") }));

/** Values for one query parameter, already encoded as they go on the wire (`k=<raw>`). */
export const HOSTILE_QUERY_VALUES: Hostile[] = [
  ["malformed-percent", "%00"], ["malformed-percent", "%ff"], ["malformed-percent", "%"], ["malformed-percent", "%E0%A4%A"],
  ["malformed-percent", "%ED%A0%80"], ["nul", "a%00b"], ["empty", ""], ["number", "0x10"], ["number", "+5"], ["number", "%2B5"],
  ["number", "%205"], ["number", "5%20"], ["number", "-1"], ["number", "1e3"], ["number", "0"], ["number", "1.5"], ["number", "NaN"],
  ["number", "Infinity"], ["number", "9007199254740993"], ["number", "1e308"], ["number", "-0"], ["number", "%EF%BC%95"], // fullwidth 5
  ["long-string", "a".repeat(4000)], ["unicode", "%E2%80%AE"], ["unicode", "%E2%80%8B"], ["control", "%0d%0a"],
  ["prototype-string", "__proto__"], ["date", "0000-01-01T00%3A00%3A00Z"], ["date", "9999-12-31T23%3A59%3A59Z"],
  ["date", "%2B275760-09-13T00%3A00%3A00Z"], ["date", "+275760-09-13T00:00:00Z"], ["date", "-271821-04-20T00%3A00%3A00Z"],
  ["date", "2026-02-30T00%3A00%3A00Z"],
].map(([cls, raw]) => ({ cls, label: raw.length > 60 ? `${raw.slice(0, 10)}… (${raw.length} chars)` : raw, raw }));

/** Whole query-string shapes for a parameter `k`: repeats, arrays, objects, bare keys. */
export const HOSTILE_QUERY_SHAPES: { cls: string; label: string; build(k: string): string }[] = [
  { cls: "repeated", label: "k=1&k=2", build: (k) => `${k}=1&${k}=2` },
  { cls: "array", label: "k[]=1", build: (k) => `${k}[]=1` },
  { cls: "array", label: "k[0]=1&k[1]=2", build: (k) => `${k}[0]=1&${k}[1]=2` },
  { cls: "object", label: "k[a]=1", build: (k) => `${k}[a]=1` },
  { cls: "prototype", label: "k[__proto__][polluted]=yes", build: (k) => `${k}[__proto__][polluted]=yes` },
  { cls: "prototype", label: "__proto__[k]=1", build: (k) => `__proto__[${k}]=1` },
  { cls: "bare", label: "k (no =)", build: (k) => k },
  { cls: "bare", label: "k==1", build: (k) => `${k}==1` },
  { cls: "malformed-percent", label: "%ff=k", build: (k) => `%ff=${k}` },
  { cls: "encoded-key", label: "%6Bey=1 (k percent-encoded)", build: (k) => `${encodeURIComponent(k).replace(/^./, (c) => "%" + c.charCodeAt(0).toString(16))}=1` },
];

/** Query strings sent to every route (also those without a query schema: they must be ignored or refused cleanly). */
export const HOSTILE_QUERY_STRINGS: Hostile[] = [
  ["malformed-percent", "%ff=%ff&%=%&%E0%A4%A=1"], ["prototype", "__proto__[polluted]=yes&constructor[prototype][polluted]=yes"],
  ["nul", "a=%00&%00=b"], ["repeated", new Array(1000).fill("a=1").join("&")], ["long-string", "q=" + "a".repeat(6000)],
].map(([cls, raw]) => ({ cls, label: raw.length > 60 ? `${raw.slice(0, 30)}… (${raw.length} chars)` : raw, raw }));

/** Authorization headers (only what Node lets a client send: no NUL or non-Latin-1 characters). */
export const HOSTILE_AUTH: { cls: string; label: string; value: string | undefined }[] = [
  { cls: "auth", label: "no Authorization", value: undefined },
  { cls: "auth", label: "Bearer (empty)", value: "Bearer " },
  { cls: "auth", label: "Bearer tg_%00", value: "Bearer tg_%00" },
  { cls: "auth", label: "Bearer tg_\\xff\\xfe", value: "Bearer tg_\xff\xfe" },
  { cls: "auth", label: "Bearer + 8000 chars", value: "Bearer tg_" + "a".repeat(8000) },
  { cls: "auth", label: "Basic Zm9vOmJhcg==", value: "Basic Zm9vOmJhcg==" },
  { cls: "auth", label: "Bearer a b c", value: "Bearer a b c" },
];

/** Idempotency-Key headers that must be refused (or accepted) cleanly. */
export const HOSTILE_IDEMPOTENCY_KEYS: { label: string; value: string }[] = [
  { label: "Idempotency-Key 300 chars", value: "k".repeat(300) },
  { label: "Idempotency-Key with space", value: "a b" },
  { label: "Idempotency-Key \\xe9", value: "cl\xe9" },
  { label: "Idempotency-Key %00", value: "%00" },
];

// ---- Random generators (fast-check) ------------------------------------------------------------------------------

/** Any UTF-16 code units, lone surrogates and NUL included. */
export const anyCodeUnits = (maxLength = 40) =>
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength }).map((cs) => String.fromCharCode(...cs));

/** Strings biased towards the characters that break things. */
export const nastyString = fc.oneof(
  anyCodeUnits(),
  fc.string({ unit: fc.constantFrom("\u0000", "\ud800", "\udfff", "\u202e", "\u200b", "\ufeff", "\r", "\n", "%", "/", "\\", "a", "é", "😀", "_", ".") , maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.integer({ min: 0, max: 200_000 }).map((n) => "a".repeat(n)),
);

/** Numbers as JSON text, including ones that do not survive a round trip through a double. */
export const nastyNumberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? "-0" : String(d))),
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.constantFrom("1e309", "-1e309", "1e-400", "-0", "9007199254740993", "4.9e-324"),
);

const pad = (n: number, w: number) => String(Math.abs(n)).padStart(w, "0");
/** Instants written as text: out-of-range years, impossible days, odd offsets and fractions. */
export const nastyDateText = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.record({
    y: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(-1, 10000, 275760, -271821)),
    mo: fc.integer({ min: 0, max: 13 }), d: fc.integer({ min: 0, max: 32 }), h: fc.integer({ min: 0, max: 25 }),
    mi: fc.integer({ min: 0, max: 61 }), s: fc.integer({ min: 0, max: 61 }),
    frac: fc.constantFrom("", ".0", ".999", ".0000000001"), tz: fc.constantFrom("Z", "+00:00", "+14:00", "-12:00", "+24:00", ""),
  }).map(({ y, mo, d, h, mi, s, frac, tz }) => {
    const year = y < 0 || y > 9999 ? `${y < 0 ? "-" : "+"}${pad(y, 6)}` : pad(y, 4);
    return `${year}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}${tz}`;
  }),
);

/** Percent-encodes arbitrary bytes (most sequences are not UTF-8), plus raw `%` debris. */
export const nastyEncoded = fc.oneof(
  fc.uint8Array({ maxLength: 12 }).map((b) => [...b].map((x) => "%" + x.toString(16).padStart(2, "0")).join("")),
  fc.array(fc.constantFrom("%", "%0", "%g", "%00", "%ff", "%2f", "%2e", "a", "_", "0", "%ED%A0%80", "%E2%80%AE"), { minLength: 1, maxLength: 8 }).map((p) => p.join("")),
  anyCodeUnits(12).map((s) => (s.isWellFormed() ? encodeURIComponent(s) : s.replace(/[^A-Za-z0-9_.~-]/g, (c) => "%" + (c.charCodeAt(0) & 0xff).toString(16).padStart(2, "0")))),
);
