import Ajv, { type ValidateFunction } from "ajv-draft-04";
import { readVendorSpec, vendorSpecFile } from "./vendor-spec-file.ts";

/**
 * Checks Slack Web API requests and responses against Slack's own API description
 * (slackapi/slack-api-specs, Swagger 2.0, MIT; the methods the stand-in serves, tests/peers/vendor-specs/): a request's
 * parameters (required ones present, types as sent in a form or a JSON body, no parameter Slack does not know, the
 * content type the method consumes), and a response body against the method's success (`ok:true`) or error
 * (`ok:false`, also on 429) schema, with ajv (draft-04, Swagger 2.0's schema dialect).
 *
 * The description dates from 2021 and has a few known gaps; each is corrected here, and only here, with its source:
 *  1. A bare `items: [A, B]` on a schema without `type` means "one of A, B" throughout the file (JSON Schema would
 *     silently ignore it, so e.g. every conversation object would pass); it is read as `anyOf`, which is stricter.
 *  2. Every method page lists "common errors" any method can answer (https://docs.slack.dev/reference/methods, e.g.
 *     chat.postMessage "Errors"): they are added to each method's error enum, plus the few method errors added since.
 *  3. Token rotation (https://docs.slack.dev/authentication/using-token-rotation) added `grant_type` and
 *     `refresh_token` to oauth.v2.access; `code` is then not sent.
 *  4. chat.update's `message.blocks` is typed `object`; it is the message's block array (as in objs_message).
 *  5. Slack takes every parameter from the query string or the body whatever `in` says, and the `token` parameter
 *     from `Authorization: Bearer` (required with JSON bodies).
 */

export const SLACK_SPEC_FILE = vendorSpecFile("slack-web-api.subset.json", "slack-web-api.openapi2.json");

const COMMON_ERRORS = [
  "access_denied", "account_inactive", "deprecated_endpoint", "ekm_access_denied", "enterprise_is_restricted",
  "fatal_error", "internal_error", "invalid_arg_name", "invalid_arguments", "invalid_array_arg", "invalid_auth",
  "invalid_charset", "invalid_form_data", "invalid_post_type", "is_bot", "method_deprecated", "missing_post_type",
  "missing_scope", "no_permission", "not_allowed_token_type", "not_authed", "org_login_required", "ratelimited",
  "request_timeout", "service_unavailable", "team_access_not_granted", "team_added_to_org", "token_expired",
  "token_revoked", "two_factor_setup_required",
];
const METHOD_ERRORS: Record<string, string[]> = {
  "conversations.list": ["invalid_cursor", "invalid_limit"],
  "chat.postMessage": ["invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long"],
  "chat.update": ["invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long"],
};
type ParamSpec = { name: string; in: string; type: string; required?: boolean; description?: string; enum?: string[] };
const EXTRA_PARAMS: Record<string, ParamSpec[]> = {
  "oauth.v2.access": [
    { name: "grant_type", in: "formData", type: "string", enum: ["authorization_code", "refresh_token"] },
    { name: "refresh_token", in: "formData", type: "string" },
  ],
};
const notRequired = (method: string, params: Record<string, unknown>): Set<string> =>
  new Set(method === "oauth.v2.access" && params.grant_type === "refresh_token" ? ["code"] : []);

export interface SlackRequestFacts {
  /** Parameters from the query string and the body together. */
  params: Record<string, unknown>;
  /** The body was JSON (values keep their JSON types) rather than a form or a query (values are strings). */
  json: boolean;
  /** Media type of the body without parameters, or null when there is none. */
  contentType: string | null;
  bearer: boolean;
}

function fixSchema(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(fixSchema);
  if (!x || typeof x !== "object") return x;
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) o[k] = k === "$ref" && typeof v === "string" ? v.replace(/^#\/definitions\//, "slack#/definitions/") : fixSchema(v);
  if (Array.isArray(o.items) && o.type === undefined) { o.anyOf = o.items; delete o.items; } // gap 1
  return o;
}

export class SlackSpec {
  private readonly doc: any;
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(file: URL | string = SLACK_SPEC_FILE) {
    this.doc = readVendorSpec("Slack", file);
    this.ajv = new Ajv({ strict: false, allErrors: true });
    this.ajv.addFormat("uri", (s: string) => URL.canParse(s));
    this.ajv.addFormat("url", (s: string) => URL.canParse(s));
    this.ajv.addFormat("email", (s: string) => /^[^@\s]+@[^@\s]+$/.test(s));
    this.ajv.addSchema({ definitions: fixSchema(this.doc.definitions) }, "slack");
  }

  private operation(method: string): any {
    const path = this.doc.paths[`/${method}`];
    if (!path) throw new Error(`${method} is not in Slack's API description`);
    return path.post ?? path.get;
  }

  /** What is wrong with a request to `method`; empty when nothing is. */
  checkRequest(method: string, req: SlackRequestFacts): string[] {
    const op = this.operation(method);
    const out: string[] = [];
    if (req.contentType && !(op.consumes ?? []).includes(req.contentType)) out.push(`${method} does not take ${req.contentType} bodies (consumes ${op.consumes})`);
    if (req.json && !req.bearer) out.push(`${method}: a JSON body needs the token in Authorization: Bearer`);
    const specs: ParamSpec[] = [...op.parameters, ...(EXTRA_PARAMS[method] ?? [])];
    const waived = notRequired(method, req.params);
    for (const p of specs) {
      const has = p.name in req.params;
      if (p.name === "token" && !has) {
        if (p.required && !req.bearer) out.push(`${method}: no token (neither Authorization: Bearer nor a token parameter)`);
        continue;
      }
      if (!has) {
        if (p.required && !waived.has(p.name)) out.push(`${method}: required parameter ${p.name} is missing`);
        continue;
      }
      const problem = typeProblem(p, req.params[p.name], req.json);
      if (problem) out.push(`${method}: parameter ${p.name} ${problem}`);
    }
    const known = new Set(specs.map((p) => p.name));
    for (const name of Object.keys(req.params)) if (!known.has(name)) out.push(`${method}: unknown parameter ${name}`);
    return out;
  }

  /** What is wrong with a response body of `method` (HTTP 200 either way, or 429); empty when nothing is. */
  checkResponse(method: string, status: number, body: unknown): string[] {
    if (status !== 200 && status !== 429) return [];
    const ok = (body as { ok?: unknown } | null)?.ok === true;
    if (status === 429 && ok) return [`${method}: a 429 must carry ok:false`];
    const key = `${method} ${ok ? "200" : "default"}`;
    let validate = this.validators.get(key);
    if (!validate) {
      const schema = structuredClone(this.operation(method).responses[ok ? "200" : "default"].schema);
      if (!ok && schema.properties?.error?.enum) schema.properties.error.enum = [...new Set([...schema.properties.error.enum, ...COMMON_ERRORS, ...(METHOD_ERRORS[method] ?? [])])]; // gap 2
      if (method === "chat.update" && ok) schema.properties.message.properties.blocks = { $ref: "#/definitions/blocks" }; // gap 4
      validate = this.ajv.compile(fixSchema(schema) as object);
      this.validators.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${method} response${e.instancePath || ""} ${e.message}${e.params && "allowedValues" in e.params ? ` (${(e.params as any).allowedValues.length} allowed)` : e.params && "additionalProperty" in e.params ? `: ${(e.params as any).additionalProperty}` : ""}`);
  }
}

/** A value as sent: form and query values are strings, JSON values keep their type. */
function typeProblem(p: ParamSpec, v: unknown, json: boolean): string | null {
  if (p.enum && !p.enum.includes(String(v))) return `must be one of ${p.enum.join(", ")}`;
  if (!json || typeof v === "string") {
    if (typeof v !== "string") return `must be a string in a form (got ${typeof v})`;
    if (json && p.type !== "string") return `must be a JSON ${p.type}, not a string`;
    if (p.type === "boolean" && !/^(true|false|1|0)$/.test(v)) return `must be a boolean (true, false, 1 or 0), got ${JSON.stringify(v.slice(0, 20))}`;
    if (p.type === "integer" && !/^-?\d+$/.test(v)) return `must be an integer, got ${JSON.stringify(v.slice(0, 20))}`;
    if (p.type === "number" && !Number.isFinite(Number(v))) return "must be a number";
    return null;
  }
  // JSON bodies: a parameter documented as "a JSON-based array ... as a URL-encoded string" is the array itself.
  if (p.type === "string") return Array.isArray(v) && /JSON-based array/i.test(p.description ?? "") ? null : `must be a string (got ${typeof v})`;
  if (p.type === "boolean") return typeof v === "boolean" ? null : "must be a boolean";
  if (p.type === "integer") return Number.isInteger(v) ? null : "must be an integer";
  if (p.type === "number") return typeof v === "number" ? null : "must be a number";
  return null;
}
