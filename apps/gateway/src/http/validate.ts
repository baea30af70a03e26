import type { z } from "zod";
import type { FieldError } from "@trendgate/contracts";
import { ApiError } from "./api-error.ts";

/** One error per field: the first check it failed (later checks of the same value would only repeat the news). */
export function toFieldErrors(location: FieldError["location"], error: z.ZodError): FieldError[] {
  const byPath = new Map<string, FieldError>();
  for (const i of error.issues) {
    const path = i.path.map(String).join(".") || (location === "body" ? "(body)" : "(all)");
    // A custom check may name its own code (params.code, e.g. duplicate_entity); else zod's.
    const code = i.code === "custom" && typeof i.params?.code === "string" ? i.params.code : i.code;
    if (!byPath.has(path)) byPath.set(path, { location, path, message: i.message, code });
  }
  return [...byPath.values()];
}

/** Parses every part of the request; collects all field errors into one 422 instead of failing on the first. */
export function validateRequest(parts: { location: FieldError["location"]; schema?: z.ZodType; value: unknown }[]) {
  const out: unknown[] = [];
  const errors: FieldError[] = [];
  for (const p of parts) {
    if (!p.schema) { out.push(undefined); continue; }
    const r = p.schema.safeParse(p.value);
    if (r.success) out.push(r.data);
    else { out.push(undefined); errors.push(...toFieldErrors(p.location, r.error)); }
  }
  // A path whose ids cannot name anything names no resource: 404, with the offending segment in errors[].
  const pathErrors = errors.filter((e) => e.location === "path");
  if (pathErrors.length) throw new ApiError("not_found", `No resource at this path: ${pathErrors.map((e) => `${e.path} ${e.message}`).join("; ")}`, { errors: pathErrors });
  if (errors.length) throw new ApiError("validation_failed", `${errors.length} field(s) failed validation`, { errors });
  return out;
}
