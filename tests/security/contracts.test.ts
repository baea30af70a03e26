// Every string a request can carry must go through the shared storable-text check (packages/contracts/src/common.ts),
// so a NUL character or a lone surrogate is a 422 naming the field, on every route that exists now or is added later.
import type { z } from "zod";
import { Signal, storableText } from "@trendgate/contracts";
import { allRoutes } from "../../apps/gateway/src/routes/index.ts";

/** Paths (route + location + field) of string schemas in `schema` that lack the check. */
function uncheckedStrings(schema: z.ZodType | undefined, at: string, out: string[], seen = new Set<unknown>()) {
  if (!schema || seen.has(schema)) return out;
  seen.add(schema);
  const def = (schema as any)._zod.def;
  const walk = (s: any, p: string) => uncheckedStrings(s, p, out, seen);
  switch (def.type) {
    case "string": if (!(def.checks ?? []).includes(storableText)) out.push(at); break;
    case "object": for (const [k, v] of Object.entries(def.shape)) walk(v, `${at}.${k}`); if (def.catchall) walk(def.catchall, `${at}.*`); break;
    case "array": walk(def.element, `${at}[]`); break;
    case "record": walk(def.keyType, `${at}{key}`); walk(def.valueType, `${at}{}`); break;
    case "union": def.options.forEach((o: any, i: number) => walk(o, `${at}|${i}`)); break;
    case "intersection": walk(def.left, at); walk(def.right, at); break;
    case "pipe": walk(def.in, at); break; // what comes out of `in` has been checked already
    case "lazy": walk(def.getter(), at); break;
    case "optional": case "nullable": case "default": case "prefault": case "readonly": case "catch": case "nonoptional": walk(def.innerType, at); break;
  }
  return out;
}

test("every request string schema of every route refuses NUL and lone surrogates", () => {
  expect(allRoutes.length).toBeGreaterThan(20);
  const missing: string[] = [];
  for (const r of allRoutes) {
    for (const [location, schema] of [["path", r.params], ["query", r.query], ["body", r.body]] as const)
      uncheckedStrings(schema, `${r.method.toUpperCase()} ${r.path} ${location}`, missing);
  }
  uncheckedStrings(Signal, "POST /api/signals body.signals[] (each item)", missing);
  expect(missing).toEqual([]);
});

test("the walker itself finds an unchecked string (it cannot pass vacuously)", async () => {
  const { z } = await import("zod");
  expect(uncheckedStrings(z.object({ a: z.string().optional(), b: z.array(z.string().max(3)) }), "x", [])).toEqual(["x.a", "x.b[]"]);
});
