import type { z } from "zod";
import type { FieldError } from "@trendgate/contracts";
import { ApiError } from "./api-error.ts";

export function toFieldErrors(location: FieldError["location"], error: z.ZodError): FieldError[] {
  return error.issues.map((i) => ({
    location,
    path: i.path.map(String).join(".") || (location === "body" ? "(body)" : "(all)"),
    message: i.message,
    code: i.code,
  }));
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
  if (errors.length) throw new ApiError("validation_failed", `${errors.length} field(s) failed validation`, { errors });
  return out;
}
