import crypto from "node:crypto";

// A plan is applied only against the state it was computed from (terraform's stale-plan rule):
// the entities' targeting read at preview is hashed, read again before writing, and a
// different hash refuses the plan. The hash is over a canonical JSON (object keys sorted, arrays kept in order), so
// the same state always hashes the same whatever order a provider returns an object's fields in.

/** JSON with object keys sorted at every level; undefined members are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** `sha256:<hex>` of the canonical JSON of `state`. */
export const stateHash = (state: unknown): string => `sha256:${crypto.createHash("sha256").update(canonicalJson(state)).digest("hex")}`;
