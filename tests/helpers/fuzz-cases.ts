// What the gateway fuzz test sends to a route: the fixed table of hostile cases (every value class against every
// route) and the fast-check arbitrary of random hostile requests. Both are derived from the route definition alone.
import fc from "fast-check";
import type { RouteDef } from "../../apps/gateway/src/http/route.ts";
import {
  anyCodeUnits, deepArray, deepObject, GARBAGE_CURSORS, HOSTILE_AUTH, HOSTILE_BODY_VALUES, HOSTILE_DATES, HOSTILE_HUGE,
  HOSTILE_IDEMPOTENCY_KEYS, HOSTILE_KEYS, HOSTILE_NUMBERS, HOSTILE_PATH_SEGMENTS, HOSTILE_PROTO, HOSTILE_QUERY_SHAPES,
  HOSTILE_QUERY_STRINGS, HOSTILE_QUERY_VALUES, HOSTILE_STRINGS, HOSTILE_WHOLE_BODIES, TYPE_CONFUSION, nastyDateText,
  nastyEncoded, nastyNumberText, nastyString, type Hostile,
} from "./fuzz-values.ts";
import {
  describePath, exampleFor, injectKey, leafPaths, nodeAt, nodePaths, objectPaths, propertyNames, replaceAt, serialize,
  toNode, type JsonNode, type NodePath,
} from "./fuzz-schema.ts";
import { paramNames, routeName, takesBody, type FuzzRequest, type FuzzSession } from "./fuzz-http.ts";

/** How a request differs from the route's benign request (valid auth, fixture ids, schema example body). */
export interface Plan {
  cls: string;
  label: string;
  /** Replaces the Authorization header; `value: undefined` sends none. */
  auth?: { value: string | undefined };
  /** Raw (already encoded) path segments by parameter name. */
  params?: Record<string, string>;
  /** Raw query string, without `?`. */
  query?: string;
  body?: { text?: string; bytes?: Buffer; contentType?: string | null; none?: boolean };
  /** "fresh": a new valid key; anything else is sent as is. */
  idem?: string;
}

const trees = new WeakMap<RouteDef, JsonNode>();
/** The route's schema example as a syntax tree (cached: it is derived by trial against the schema). */
export function bodyTree(route: RouteDef): JsonNode | undefined {
  if (!route.body) return undefined;
  let t = trees.get(route);
  if (!t) { t = toNode(exampleFor(route.body).value); trees.set(route, t); }
  return t;
}

export function materialize(route: RouteDef, plan: Plan, s: FuzzSession): FuzzRequest {
  const path = route.path.replace(/\{(\w+)\}/g, (_, n: string) => plan.params?.[n] ?? s.paramValue(route, n));
  const headers: Record<string, string> = {};
  const auth = plan.auth ? plan.auth.value : route.auth === "apiKey" ? s.authHeader : undefined;
  if (auth !== undefined) headers.authorization = auth;
  let body: string | Buffer | undefined;
  if (takesBody(route) && !plan.body?.none) {
    const tree = bodyTree(route);
    body = plan.body?.bytes ?? plan.body?.text ?? (tree ? serialize(tree) : undefined);
    const ct = plan.body?.contentType === undefined ? "application/json" : plan.body.contentType;
    if (body !== undefined && ct !== null) headers["content-type"] = ct;
  }
  if (plan.idem) headers["idempotency-key"] = plan.idem === "fresh" ? s.freshIdempotencyKey() : plan.idem;
  const wirePath = plan.query !== undefined ? `${path}?${plan.query}` : path;
  return { route: routeName(route), cls: plan.cls, label: plan.label, params: paramNames(route), wire: { method: route.method, path: wirePath, headers, body } };
}

// ---- The fixed table -----------------------------------------------------------------------------------------------
// Every value of the catalogue reaches every route once (spread round-robin over its fields and parameters), and a
// core of the values that most often break storage and parsing reaches every single field and parameter. Sized so
// the whole file stays within a minute on two cores; random requests (below) explore the rest.

const isDateLeaf = (t: JsonNode) => t.k === "raw" && /^"\d{4}-\d\d-\d\dT/.test(t.text);
const isNumberLeaf = (t: JsonNode) => t.k === "raw" && /^-?\d/.test(t.text);
const byLabel = (list: Hostile[], ...labels: string[]) => labels.map((l) => {
  const h = list.find((x) => x.label === l);
  if (!h) throw new Error(`fuzz catalogue has no ${l}`);
  return h;
});

/** For every field of a body. */
const PER_LEAF: Hostile[] = [
  ...byLabel(HOSTILE_STRINGS, '"a\\u0000b"', '"\\ud800"', '"a" x 100000'),
  ...byLabel(HOSTILE_NUMBERS, "1e308"),
  ...byLabel(TYPE_CONFUSION, "[]"),
];
/** In addition, for every number field and every date field. */
const PER_NUMBER_LEAF = byLabel(HOSTILE_NUMBERS, "1e309", "-0", "9007199254740993", "0.5", "-1", "4.9e-324");
const PER_DATE_LEAF = HOSTILE_DATES;
/** For every query parameter. */
const PER_QUERY_KEY = [...byLabel(HOSTILE_QUERY_VALUES, "%00", "%ff", "%", "%ED%A0%80")];
const PER_QUERY_KEY_SHAPES = HOSTILE_QUERY_SHAPES.filter((s) => ["k=1&k=2", "k[]=1", "k[a]=1"].includes(s.label));
/** Path values for every parameter: every malformed encoding and NUL, and one value of each other class. */
const PATH_CORE = HOSTILE_PATH_SEGMENTS.filter((h, i, all) => h.cls === "malformed-percent" || h.cls === "nul" || all.findIndex((x) => x.cls === h.cls) === i);
const PATH_REST = HOSTILE_PATH_SEGMENTS.filter((h) => !PATH_CORE.includes(h));
/** The core, and a third of the other values: which third depends on the route, so each value reaches a third of the routes. */
function pathSegmentsFor(route: RouteDef): Hostile[] {
  const h = [...`${route.method} ${route.path}`].reduce((a, c) => (a * 31 + c.charCodeAt(0)) >>> 0, 7);
  return [...PATH_CORE, ...PATH_REST.filter((_, i) => (i + h) % 3 === 0)];
}
/** Whole bodies for routes with a body schema: one or two of each class, and every malformed document. */
const WHOLE_BODIES = HOSTILE_WHOLE_BODIES.filter((h, i, all) => h.cls === "malformed-json" || all.filter((x, j) => j < i && x.cls === h.cls).length < 2);
/** Whole bodies sent to routes that take no body (they must be ignored or refused cleanly). */
const BODYLESS_BODIES = HOSTILE_WHOLE_BODIES.filter((h) => ["deep", "malformed-json", "prototype"].includes(h.cls)).slice(0, 8);
const BODY_TYPES = ["application/json; charset=utf-16", "application/json; charset=latin1", "application/json; charset=\u00ff", "text/plain",
  "application/x-www-form-urlencoded", "application/merge-patch+json", "multipart/form-data; boundary=x"];

/** Every hostile value class against this route: auth, each path parameter, each query parameter, the body. */
export function fixedPlans(route: RouteDef): Plan[] {
  const plans: Plan[] = [{ cls: "baseline", label: "schema example, valid auth and fixture ids" }];
  const params = paramNames(route);

  if (route.auth === "apiKey") {
    for (const a of HOSTILE_AUTH) plans.push({ cls: a.cls, label: a.label, auth: { value: a.value } });
    // Without a key, a malformed path must still be refused cleanly (before or after authentication).
    for (const n of params) for (const seg of byLabel(HOSTILE_PATH_SEGMENTS, "%ff", "%", "%E0%A4%A", "a%00b"))
      plans.push({ cls: `no-auth ${seg.cls}`, label: `{${n}} = ${seg.label}, no Authorization`, auth: { value: undefined }, params: { [n]: seg.raw } });
  }

  for (const n of params) for (const seg of pathSegmentsFor(route)) plans.push({ cls: seg.cls, label: `{${n}} = ${seg.label}`, params: { [n]: seg.raw } });

  const qkeys = propertyNames(route.query);
  if (qkeys.length) {
    const all = [...HOSTILE_QUERY_VALUES, ...GARBAGE_CURSORS];
    all.forEach((v, i) => { const k = qkeys[i % qkeys.length]; plans.push({ cls: v.cls, label: `?${k}=${v.label}`, query: `${k}=${v.raw}` }); });
    HOSTILE_QUERY_SHAPES.forEach((sh, i) => { const k = qkeys[i % qkeys.length]; plans.push({ cls: sh.cls, label: `?${sh.label.replace(/\bk\b/g, k)}`, query: sh.build(k) }); });
    for (const k of qkeys) {
      for (const v of PER_QUERY_KEY) plans.push({ cls: v.cls, label: `?${k}=${v.label}`, query: `${k}=${v.raw}` });
      for (const sh of PER_QUERY_KEY_SHAPES) plans.push({ cls: sh.cls, label: `?${sh.label.replace(/\bk\b/g, k)}`, query: sh.build(k) });
    }
  }
  for (const q of HOSTILE_QUERY_STRINGS) plans.push({ cls: q.cls, label: `?${q.label}`, query: q.raw });

  if (route.idempotent) for (const i of HOSTILE_IDEMPOTENCY_KEYS) plans.push({ cls: "idempotency-key", label: i.label, idem: i.value });

  if (!takesBody(route)) return plans;

  const tree = bodyTree(route);
  if (!tree) {
    for (const h of BODYLESS_BODIES) plans.push({ cls: h.cls, label: `body = ${h.label}`, body: h.bytes ? { bytes: h.bytes } : { text: h.raw } });
    plans.push({ cls: "content-type", label: "Content-Type: text/plain", body: { text: "{}", contentType: "text/plain" } });
    return plans;
  }
  const leaves = leafPaths(tree);
  const at = (p: NodePath, h: Hostile): Plan => ({ cls: h.cls, label: `${describePath(tree, p)} = ${h.label}`, body: { text: serialize(replaceAt(tree, p, h.raw)) } });
  // Every other value once, spread round-robin over the fields.
  HOSTILE_BODY_VALUES.filter((h) => !PER_LEAF.includes(h)).forEach((h, i) => plans.push(at(leaves[i % leaves.length], h)));
  for (const p of leaves) {
    const leaf = nodeAt(tree, p);
    const extra = isDateLeaf(leaf) ? PER_DATE_LEAF : isNumberLeaf(leaf) ? PER_NUMBER_LEAF : [];
    for (const h of [...PER_LEAF, ...extra]) plans.push(at(p, h));
  }
  for (const p of objectPaths(tree)) {
    const where = describePath(tree, p);
    if (p.length) plans.push(at(p, byLabel(TYPE_CONFUSION, "[]")[0]));
    for (const k of p.length ? HOSTILE_KEYS.filter((x) => x.cls === "prototype-key") : HOSTILE_KEYS)
      plans.push({ cls: k.cls, label: `${where} += ${k.label}`, body: { text: serialize(injectKey(tree, p, k.key, k.value)) } });
    const obj = nodeAt(tree, p);
    // Duplicate key: JSON.parse keeps the last one, so the second value is what a handler sees.
    if (obj.k === "obj" && obj.entries.length)
      plans.push({ cls: "duplicate-key", label: `${where}: ${obj.entries[0][0]} repeated with "\\u0000"`, body: { text: serialize(injectKey(tree, p, obj.entries[0][0], JSON.stringify("\u0000"))) } });
  }
  // Each array of the example: a deep one and a huge one in its place.
  for (const p of nodePaths(tree).filter((q) => q.length && nodeAt(tree, q).k === "arr"))
    for (const h of byLabel(HOSTILE_HUGE, "[[[…]]] depth 5000", "[0,0,…] 100000 items")) plans.push(at(p, h));
  for (const h of WHOLE_BODIES) plans.push({ cls: h.cls, label: `body = ${h.label}`, body: h.bytes ? { bytes: h.bytes } : { text: h.raw } });
  const example = serialize(tree);
  for (const ct of BODY_TYPES) plans.push({ cls: "content-type", label: `Content-Type: ${ct}`, body: { text: example, contentType: ct } });
  plans.push({ cls: "content-type", label: "body without Content-Type", body: { text: example, contentType: null } });
  plans.push({ cls: "empty", label: "empty body (application/json, Content-Length 0)", body: { text: "" } });
  plans.push({ cls: "empty", label: "no body at all", body: { none: true } });
  return plans;
}

// ---- Random requests (fast-check) ----------------------------------------------------------------------------------

const clip = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n)}…(${s.length})` : s);
const asHostile = (cls: string) => (raw: string): Hostile => ({ cls, label: clip(raw), raw });
const jsonText = (cls: string) => (v: unknown): Hostile => { const raw = JSON.stringify(v) ?? "null"; return { cls, label: clip(raw), raw }; };

/** A hostile JSON value (as text): from the catalogue, or random strings, numbers, dates, JSON and nesting. */
export const hostileJson: fc.Arbitrary<Hostile> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_BODY_VALUES) },
  { weight: 3, arbitrary: nastyString.map(jsonText("random-string")) },
  { weight: 2, arbitrary: nastyNumberText.map(asHostile("random-number")) },
  { weight: 2, arbitrary: nastyDateText.map(jsonText("random-date")) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map(jsonText("random-json")) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6000 }).chain((d) => fc.constantFrom(
    { cls: "deep", label: `[[…]] depth ${d}`, raw: deepArray(d) }, { cls: "deep", label: `{"a":…} depth ${d}`, raw: deepObject(d) })) },
);

const hostileSegment: fc.Arbitrary<Hostile> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_PATH_SEGMENTS) },
  { weight: 2, arbitrary: nastyEncoded.filter((s) => s.length > 0).map(asHostile("random-encoded")) },
);

const hostileQueryValue: fc.Arbitrary<Hostile> = fc.oneof(
  fc.constantFrom(...HOSTILE_QUERY_VALUES), fc.constantFrom(...GARBAGE_CURSORS), nastyEncoded.map(asHostile("random-encoded")),
  nastyNumberText.map((n) => ({ cls: "random-number", label: n, raw: encodeURIComponent(n) })),
  nastyDateText.map((d) => ({ cls: "random-date", label: d, raw: encodeURIComponent(d) })),
  anyCodeUnits(20).filter((s) => s.isWellFormed()).map((s) => ({ cls: "random-string", label: clip(JSON.stringify(s)), raw: encodeURIComponent(s) })),
);

type Mutation = { kind: "replace"; path: NodePath; value: Hostile } | { kind: "key"; path: NodePath; key: string; value: Hostile; label: string };

function bodyArbitrary(route: RouteDef): fc.Arbitrary<{ plan: Plan["body"]; cls: string; label: string } | undefined> {
  const tree = bodyTree(route);
  const whole = fc.constantFrom(...HOSTILE_WHOLE_BODIES).map((h) => ({ plan: h.bytes ? { bytes: h.bytes } : { text: h.raw }, cls: h.cls, label: `body = ${h.label}` }));
  if (!tree) return fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: whole });
  const paths = nodePaths(tree);
  const objs = objectPaths(tree);
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant("replace" as const), path: fc.constantFrom(...paths), value: hostileJson }) },
    { weight: 1, arbitrary: fc.record({ path: fc.constantFrom(...objs), k: fc.constantFrom(...HOSTILE_KEYS) })
        .map(({ path, k }) => ({ kind: "key" as const, path, key: k.key, value: { cls: k.cls, label: k.value, raw: k.value }, label: k.label })) },
    { weight: 1, arbitrary: fc.record({ path: fc.constantFrom(...objs), key: nastyString, value: hostileJson })
        .map(({ path, key, value }) => ({ kind: "key" as const, path, key: JSON.stringify(key), value, label: `${clip(JSON.stringify(key), 30)}: ${value.label}` })) },
  );
  const mutated = fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => {
    let t = tree;
    const labels: string[] = [];
    for (const m of ms) {
      if (m.kind === "replace") { labels.push(`${describePath(t, m.path)} = ${m.value.label}`); t = replaceAt(t, m.path, m.value.raw); }
      else { labels.push(`${describePath(t, m.path)} += ${m.label}`); t = injectKey(t, m.path, m.key, m.value.raw); }
    }
    return { plan: { text: serialize(t) }, cls: ms.map((m) => m.value.cls).join("+"), label: labels.join(", ") };
  });
  return fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 6, arbitrary: mutated }, { weight: 1, arbitrary: whole });
}

/** Random hostile requests for one route; each part falls back (and shrinks) to the benign request. */
export function planArbitrary(route: RouteDef): fc.Arbitrary<Plan> {
  const names = paramNames(route);
  const qkeys = [...propertyNames(route.query), "x"];
  const benign = <T>(a: fc.Arbitrary<T>, weight = 1) => fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight, arbitrary: a });
  const parts = fc.record({
    auth: route.auth === "apiKey" ? fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_AUTH) }) : fc.constant(undefined),
    params: fc.tuple(...names.map((n) => benign(hostileSegment).map((h) => (h ? ([n, h] as const) : undefined)))),
    query: benign(fc.array(fc.oneof(
      fc.record({ k: fc.constantFrom(...qkeys), v: hostileQueryValue }).map(({ k, v }) => ({ raw: `${k}=${v.raw}`, label: `${k}=${v.label}`, cls: v.cls })),
      fc.record({ k: fc.constantFrom(...qkeys), sh: fc.constantFrom(...HOSTILE_QUERY_SHAPES) }).map(({ k, sh }) => ({ raw: sh.build(k), label: sh.label.replace(/\bk\b/g, k), cls: sh.cls })),
      fc.constantFrom(...HOSTILE_QUERY_STRINGS).map((q) => ({ raw: q.raw, label: q.label, cls: q.cls })),
    ), { minLength: 1, maxLength: 3 }), 3),
    body: takesBody(route) ? bodyArbitrary(route) : fc.constant(undefined),
    idem: route.idempotent ? fc.oneof(fc.constant(undefined), fc.constant("fresh"), fc.constantFrom(...HOSTILE_IDEMPOTENCY_KEYS).map((i) => i.value)) : fc.constant(undefined),
  });
  return parts.map((p) => {
    const labels: string[] = [];
    const classes: string[] = [];
    const plan: Plan = { cls: "", label: "" };
    if (p.auth) { plan.auth = { value: p.auth.value }; labels.push(p.auth.label); classes.push("auth"); }
    const segs = p.params.filter((x): x is readonly [string, Hostile] => !!x);
    if (segs.length) { plan.params = Object.fromEntries(segs.map(([n, h]) => [n, h.raw])); for (const [n, h] of segs) { labels.push(`{${n}} = ${h.label}`); classes.push(h.cls); } }
    if (p.query) { plan.query = p.query.map((q) => q.raw).join("&"); labels.push(`?${p.query.map((q) => q.label).join("&")}`); classes.push(...p.query.map((q) => q.cls)); }
    if (p.body) { plan.body = p.body.plan; labels.push(p.body.label); classes.push(p.body.cls); }
    if (p.idem) { plan.idem = p.idem; if (p.idem !== "fresh") { labels.push(`Idempotency-Key ${clip(JSON.stringify(p.idem), 20)}`); classes.push("idempotency-key"); } }
    plan.cls = classes.join(",") || "baseline";
    plan.label = labels.join("; ") || "benign request";
    // fast-check prints counterexamples with this instead of dumping 100 kB strings.
    return Object.assign(plan, { [fc.toStringMethod]: () => `Plan(${plan.label})` });
  });
}
