// Schema side of the gateway fuzz test: a valid example of a route's zod schema (derived through z.toJSONSchema and
// checked against the zod schema itself), and a JSON syntax tree of it whose nodes can be replaced by raw JSON text.
import fc from "fast-check";
import { z } from "zod";

type JsonSchema = Record<string, any>;

export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any", cycles: "ref", reused: "inline" }) as JsonSchema;
}

/** Top-level property names of an object schema (query and path schemas): the parameters a route reads. */
export function propertyNames(schema: z.ZodType | undefined): string[] {
  if (!schema) return [];
  const s = resolve(jsonSchemaOf(schema), jsonSchemaOf(schema));
  return Object.keys(s.properties ?? {});
}

/** The JSON schema of one top-level property (to derive a valid path parameter, say). */
export function propertySchema(schema: z.ZodType, name: string): JsonSchema {
  const root = jsonSchemaOf(schema);
  return resolve(resolve(root, root).properties?.[name] ?? {}, root);
}

function resolve(s: JsonSchema, root: JsonSchema, seen = 0): JsonSchema {
  if (!s || typeof s !== "object" || !s.$ref || seen > 20) return s ?? {};
  const ref = String(s.$ref);
  const target = ref === "#" ? root : ref.startsWith("#/$defs/") ? root.$defs?.[decodeURIComponent(ref.slice(8))] : undefined;
  const { $ref: _ignored, ...rest } = s;
  return resolve({ ...(target ?? {}), ...rest }, root, seen + 1);
}

// ---- Valid examples ------------------------------------------------------------------------------------------------
// A template has, at each leaf, a list of candidate values; the example takes the first candidate of each leaf, and
// every leaf the zod schema complains about moves on to its next candidate (optional ones are dropped at the end).

type Template =
  | { t: "leaf"; cands: unknown[] }
  | { t: "obj"; props: { key: string; node: Template; required: boolean }[] }
  | { t: "arr"; items: Template[] };

const DAY = 86_400_000;

function stringCandidates(s: JsonSchema): unknown[] {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Number.POSITIVE_INFINITY;
  const re = s.pattern ? safeRegExp(s.pattern) : undefined;
  const ok = (v: unknown) => typeof v === "string" && v.length >= min && v.length <= max && (!re || re.test(v));
  const given = [s.example, ...(Array.isArray(s.examples) ? s.examples : []), s.default];
  // A URL example names a host; an IP literal (allowed by the test's OUTBOUND_ALLOWLIST) keeps DNS out of every request.
  const out: unknown[] = [...given.flatMap((g) => (typeof g === "string" && /^https?:\/\/[a-z]/i.test(g) ? [g.replace(/^https?:\/\/[^/]+/i, "http://127.0.0.1:9"), g] : [g]))];
  if (s.format === "date-time" || s.format === "date") {
    out.push(new Date(Date.now() + DAY).toISOString(), new Date(Date.now() - DAY).toISOString(), new Date(Date.now() - 60_000).toISOString(), "2026-01-01T00:00:00.000Z");
  }
  if (s.format === "uri" || s.format === "url") out.push("https://hooks.example.com/trendgate", "http://127.0.0.1:9/hook");
  if (re) {
    try {
      out.push(...fc.sample(fc.stringMatching(re, { size: "small" }), { seed: 7, numRuns: 40 }).sort((a, b) => Math.abs(a.length - 8) - Math.abs(b.length - 8)));
    } catch { /* a pattern fast-check cannot generate from */ }
  }
  out.push("example", "a".repeat(Math.max(min, 1)), "Mozilla/5.0 trendgate-fuzz (by /u/trendgate)", "https://hooks.example.com/trendgate", "http://127.0.0.1:9/hook");
  const good = out.filter(ok);
  return good.length ? [...new Set(good)] : ["a".repeat(Math.max(min, 1))];
}

function numberCandidates(s: JsonSchema, integer: boolean): unknown[] {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 0.5) : undefined);
  const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 0.5) : undefined);
  const clamp = (v: number) => Math.min(hi ?? v, Math.max(lo ?? v, v));
  const out = [s.default, s.example, clamp(1), clamp(10), lo, hi, lo !== undefined && hi !== undefined ? Math.floor((lo + hi) / 2) : undefined, 0];
  return [...new Set(out.filter((v): v is number => typeof v === "number" && (!integer || Number.isInteger(v))))];
}

function template(s0: JsonSchema, root: JsonSchema, depth = 0): Template {
  const s = resolve(s0, root);
  if (depth > 12) return { t: "leaf", cands: [null] };
  if ("const" in s) return { t: "leaf", cands: [s.const] };
  if (Array.isArray(s.enum)) return { t: "leaf", cands: s.enum.filter((v: unknown) => v !== null).concat(s.enum.includes(null) ? [null] : []) };
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts)) {
    const nonNull = alts.map((a: JsonSchema) => resolve(a, root)).filter((a: JsonSchema) => a.type !== "null");
    return template({ ...s, anyOf: undefined, oneOf: undefined, ...(nonNull[0] ?? { type: "null" }) }, root, depth + 1);
  }
  if (Array.isArray(s.allOf) && s.allOf.length) return template({ ...s, allOf: undefined, ...resolve(s.allOf[0], root) }, root, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const required = new Set<string>(s.required ?? []);
      return { t: "obj", props: Object.entries(s.properties ?? {}).map(([key, p]) => ({ key, node: template(p as JsonSchema, root, depth + 1), required: required.has(key) })) };
    }
    case "array": {
      const n = Math.min(Math.max(s.minItems ?? 0, 1), s.maxItems ?? 1);
      const items = Array.isArray(s.prefixItems) ? s.prefixItems : new Array(n).fill(s.items ?? {});
      return { t: "arr", items: items.map((i: JsonSchema, k: number) => template(i, root, depth + 1 + k * 0)) };
    }
    case "string": return { t: "leaf", cands: stringCandidates(s) };
    case "integer": return { t: "leaf", cands: numberCandidates(s, true) };
    case "number": return { t: "leaf", cands: numberCandidates(s, false) };
    case "boolean": return { t: "leaf", cands: [true, false] };
    case "null": return { t: "leaf", cands: [null] };
    default: return { t: "leaf", cands: ["example", 1, true, {}] }; // unconstrained (z.unknown())
  }
}

function materialize(t: Template, choice: Map<string, number>, dropped: Set<string>, path = ""): unknown {
  if (t.t === "leaf") return t.cands[Math.min(choice.get(path) ?? 0, t.cands.length - 1)];
  if (t.t === "arr") return t.items.map((i, k) => materialize(i, choice, dropped, `${path}/${k}`));
  const out: Record<string, unknown> = {};
  for (const p of t.props) {
    const sub = `${path}/${p.key}`;
    if (!dropped.has(sub)) out[p.key] = materialize(p.node, choice, dropped, sub);
  }
  return out;
}

/** Template leaf (or optional property) an issue path points into, as [leafPath, optionalPropPath]. */
function blame(t: Template, issuePath: PropertyKey[]): { leaf?: { path: string; t: Extract<Template, { t: "leaf" }> }; optional?: string } {
  let node: Template = t;
  let path = "";
  let optional: string | undefined;
  for (const seg of issuePath) {
    if (node.t === "obj") {
      const p = node.props.find((x) => x.key === String(seg));
      if (!p) break;
      path += `/${p.key}`;
      if (!p.required) optional = path;
      node = p.node;
    } else if (node.t === "arr") {
      const i = Number(seg);
      if (!node.items[i]) break;
      path += `/${i}`;
      node = node.items[i];
    } else break;
  }
  return { leaf: node.t === "leaf" ? { path, t: node } : undefined, optional };
}

/**
 * A value the zod schema accepts, when one can be found from its JSON schema (`valid`), else the closest attempt.
 * Optional properties are included: every field is a place to put a hostile value.
 */
export function exampleFor(schema: z.ZodType): { value: unknown; valid: boolean; issues: string[] } {
  const root = jsonSchemaOf(schema);
  const t = template(root, root);
  const choice = new Map<string, number>();
  const dropped = new Set<string>();
  let value = materialize(t, choice, dropped);
  for (let round = 0; round < 60; round++) {
    const r = schema.safeParse(value);
    if (r.success) return { value, valid: true, issues: [] };
    let changed = false;
    for (const issue of r.error.issues) {
      const { leaf, optional } = blame(t, issue.path);
      if (leaf && (choice.get(leaf.path) ?? 0) < leaf.t.cands.length - 1) {
        choice.set(leaf.path, (choice.get(leaf.path) ?? 0) + 1);
        changed = true;
      } else if (optional && !dropped.has(optional)) {
        dropped.add(optional);
        changed = true;
      }
    }
    if (!changed) return { value, valid: false, issues: r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`) };
    value = materialize(t, choice, dropped);
  }
  const r = schema.safeParse(value);
  return { value, valid: r.success, issues: r.success ? [] : r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`) };
}

/** A valid value for one string/number property of an object schema (path parameters). */
export function exampleProperty(schema: z.ZodType, name: string): string {
  const full = exampleFor(schema).value as Record<string, unknown> | undefined;
  const v = full && typeof full === "object" ? full[name] : undefined;
  return v === undefined ? "example" : String(v);
}

function safeRegExp(p: string): RegExp | undefined {
  try { return new RegExp(p); } catch { try { return new RegExp(p, "u"); } catch { return undefined; } }
}

// ---- JSON syntax tree with raw replacements ------------------------------------------------------------------------
// Objects keep their keys as raw JSON text and in order, so duplicate, `__proto__` and non-UTF-16 keys survive.

export type JsonNode = { k: "raw"; text: string } | { k: "arr"; items: JsonNode[] } | { k: "obj"; entries: [string, JsonNode][] };
export type NodePath = number[];

export function toNode(v: unknown): JsonNode {
  if (Array.isArray(v)) return { k: "arr", items: v.map(toNode) };
  if (v && typeof v === "object") return { k: "obj", entries: Object.entries(v).map(([key, x]) => [JSON.stringify(key), toNode(x)]) };
  return { k: "raw", text: JSON.stringify(v) ?? "null" };
}

export function serialize(n: JsonNode): string {
  if (n.k === "raw") return n.text;
  if (n.k === "arr") return `[${n.items.map(serialize).join(",")}]`;
  return `{${n.entries.map(([key, x]) => `${key}:${serialize(x)}`).join(",")}}`;
}

/** Every node's path, root first (containers too: replacing one is type confusion for a whole sub-tree). */
export function nodePaths(n: JsonNode, at: NodePath = []): NodePath[] {
  const kids = n.k === "arr" ? n.items : n.k === "obj" ? n.entries.map((e) => e[1]) : [];
  return [at, ...kids.flatMap((c, i) => nodePaths(c, [...at, i]))];
}

export const leafPaths = (n: JsonNode) => nodePaths(n).filter((p) => nodeAt(n, p).k === "raw");
export const objectPaths = (n: JsonNode) => nodePaths(n).filter((p) => nodeAt(n, p).k === "obj");

export function nodeAt(n: JsonNode, p: NodePath): JsonNode {
  return p.reduce<JsonNode>((x, i) => (x.k === "arr" ? x.items[i] : x.k === "obj" ? x.entries[i][1] : x), n);
}

/** Dotted field name of a path (`options.subreddits.0`), as an error would name it. */
export function describePath(n: JsonNode, p: NodePath): string {
  const parts: string[] = [];
  let x = n;
  for (const i of p) {
    if (x.k === "arr") { parts.push(String(i)); x = x.items[i]; }
    else if (x.k === "obj") { parts.push(safeKey(x.entries[i][0])); x = x.entries[i][1]; }
  }
  return parts.join(".") || "(body)";
}
const safeKey = (raw: string) => { try { return JSON.parse(raw); } catch { return raw; } };

export function replaceAt(n: JsonNode, p: NodePath, text: string): JsonNode {
  if (!p.length) return { k: "raw", text };
  const [i, ...rest] = p;
  if (n.k === "arr") return { k: "arr", items: n.items.map((c, k) => (k === i ? replaceAt(c, rest, text) : c)) };
  if (n.k === "obj") return { k: "obj", entries: n.entries.map(([key, c], k) => [key, k === i ? replaceAt(c, rest, text) : c]) };
  return n;
}

/** Adds `key: value` (raw JSON texts) to the object at `p`; with `duplicate`, re-sends an existing key instead. */
export function injectKey(n: JsonNode, p: NodePath, key: string, value: string): JsonNode {
  if (!p.length) return n.k === "obj" ? { k: "obj", entries: [...n.entries, [key, { k: "raw", text: value }]] } : n;
  const [i, ...rest] = p;
  if (n.k === "arr") return { k: "arr", items: n.items.map((c, k) => (k === i ? injectKey(c, rest, key, value) : c)) };
  if (n.k === "obj") return { k: "obj", entries: n.entries.map(([kk, c], k) => [kk, k === i ? injectKey(c, rest, key, value) : c]) };
  return n;
}
