import { z } from "zod";
import { text } from "./common.ts";
import { Severity } from "./trend-events.ts";

// A subscription's filter: simple fields for what most receivers want (minimum severity, a sentiment range) and a
// MongoDB-style query (`match`) on the event's fields for the rest, e.g. {"velocity": {"$gte": 200}, "category":
// {"$in": ["tech/ai", "tech/chips"]}}. The query is checked here, at creation (known fields, a small set of operators,
// literal operands), and run by sift in the worker (packages/webhooks/src/filter.ts) with the same operators.

/** The event fields a `match` query may name, with what their values are. */
export const FILTER_FIELDS = {
  type: "string: the event type (trend.detected, …)",
  trend_id: "string",
  trend_name: "string",
  category: "string: the trend's category path",
  severity: "string: low | medium | high | critical",
  previous_severity: "string or null",
  velocity: "number: mentions per hour above the expected rate",
  previous_velocity: "number or null",
  anomaly_score: "number",
  sentiment: "number -1..1 or null: the topic's mean sentiment when measured",
} as const;

/** Comparison operators a field may use (no $where, $regex or anything that runs code or backtracks). */
export const FILTER_OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"] as const;
/** Operators that combine queries. */
export const FILTER_LOGICAL = ["$and", "$or", "$nor"] as const;

const MAX_DEPTH = 4;
const MAX_NODES = 50;
type Literal = string | number | boolean | null;
// Strings are stored (jsonb) and compared: no NUL, no lone surrogate.
const isLiteral = (v: unknown): v is Literal =>
  v === null || ["number", "boolean"].includes(typeof v) || (typeof v === "string" && !v.includes("\u0000") && v.isWellFormed());

/** Problems with a match query, each with its path inside `match` (empty: valid). */
export function matchProblems(q: unknown): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  let nodes = 0;
  const walk = (node: unknown, path: (string | number)[], depth: number) => {
    if (++nodes > MAX_NODES) { if (nodes === MAX_NODES + 1) out.push({ path, message: `at most ${MAX_NODES} conditions` }); return; }
    if (depth > MAX_DEPTH) { out.push({ path, message: `nested at most ${MAX_DEPTH} deep` }); return; }
    if (typeof node !== "object" || node === null || Array.isArray(node)) { out.push({ path, message: "a query object: {field: value | {operator: value}}" }); return; }
    for (const [key, value] of Object.entries(node)) {
      const at = [...path, key];
      if ((FILTER_LOGICAL as readonly string[]).includes(key)) {
        if (!Array.isArray(value) || value.length === 0) { out.push({ path: at, message: `${key} takes a non-empty array of queries` }); continue; }
        value.forEach((v, i) => walk(v, [...at, i], depth + 1));
      } else if (key.startsWith("$")) {
        out.push({ path: at, message: `unknown operator ${key} at the top of a query (use ${FILTER_LOGICAL.join(", ")}, or a field name)` });
      } else if (!Object.hasOwn(FILTER_FIELDS, key)) { // own names only: `in` would let constructor, toString, __proto__ through
        out.push({ path: at, message: `unknown field ${key}: one of ${Object.keys(FILTER_FIELDS).join(", ")}` });
      } else if (isLiteral(value)) {
        continue;
      } else if (typeof value === "object" && !Array.isArray(value)) {
        for (const [op, operand] of Object.entries(value)) {
          if (!(FILTER_OPERATORS as readonly string[]).includes(op)) { out.push({ path: [...at, op], message: `unknown operator ${op}: one of ${FILTER_OPERATORS.join(", ")}` }); continue; }
          const ok = op === "$in" || op === "$nin"
            ? Array.isArray(operand) && operand.length > 0 && operand.length <= 100 && operand.every(isLiteral)
            : op === "$exists" ? typeof operand === "boolean" : isLiteral(operand);
          if (!ok) out.push({ path: [...at, op], message: op === "$in" || op === "$nin" ? `${op} takes 1-100 strings, numbers, booleans or nulls` : op === "$exists" ? "$exists takes true or false" : `${op} takes a string, number, boolean or null` });
        }
      } else out.push({ path: at, message: "a string, number, boolean, null or {operator: value}" });
    }
  };
  walk(q, [], 0);
  return out;
}

export const WebhookFilter = z
  .object({
    min_severity: Severity.optional().meta({ description: "Only events whose severity is at least this" }),
    sentiment: z.object({
      min: z.number().min(-1).max(1).optional(),
      max: z.number().min(-1).max(1).optional(),
    }).strict().refine((s) => s.min === undefined || s.max === undefined || s.min <= s.max, { message: "min must not exceed max", path: ["min"] })
      .optional().meta({ description: "Only events whose topic sentiment (-1..1) is within this range; an event without a sentiment does not match a range" }),
    // Checked as sent, before the record is built: building it drops an own "__proto__" key (JSON.parse makes one),
    // which would leave a query that matches everything.
    match: z.preprocess((q, ctx) => {
      for (const p of matchProblems(q)) ctx.addIssue({ code: "custom", path: p.path, message: p.message, input: q });
      return q;
    }, z.record(text({ min: 1, max: 100 }), z.unknown())).optional().meta({
      description: `A MongoDB-style query on the event's fields (${Object.keys(FILTER_FIELDS).join(", ")}); operators ${FILTER_OPERATORS.join(", ")}, combined with ${FILTER_LOGICAL.join(", ")}. ` +
        'Example: {"velocity": {"$gte": 200}, "category": {"$in": ["tech/ai", "tech/chips"]}}',
    }),
  })
  .strict()
  .meta({ id: "WebhookFilter", description: "Every condition given must hold (and with trigger_type and category)" });
export type WebhookFilter = z.infer<typeof WebhookFilter>;
