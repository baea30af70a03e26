import fs from "node:fs";
import path from "node:path";

// Every named API schema (a zod schema with `.meta({ id })`, a component of the OpenAPI document) is declared in
// packages/contracts (or, for a provider's own bodies, in its connector folder), never in a route file: routes import
// them. A route file that names a schema itself, or adds one to zod's global registry, fails here.

const root = path.resolve(import.meta.dirname, "../..");
const ROUTES = path.join(root, "apps/gateway/src/routes");

const NAMED = [
  /\.meta\(\s*\{(?:[^}]*,)?\s*["']?id["']?\s*:/g, // .meta({ id: "X" }), .meta({ description: "…", id: "X" })
  /\bglobalRegistry\s*\.\s*add\s*\(|\.register\(\s*(?:z\s*\.\s*)?globalRegistry\b/g, // the same, by hand
];

/** Each named schema declared in `source`, as `file:line: text`. */
function namedSchemasIn(file: string, source: string): string[] {
  const found: string[] = [];
  for (const re of NAMED) {
    for (const m of source.matchAll(re)) {
      const line = source.slice(0, m.index).split("\n").length;
      found.push(`${file}:${line}: ${m[0].replace(/\s+/g, " ")}`);
    }
  }
  return found;
}

const routeFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? routeFiles(p) : e.name.endsWith(".ts") ? [p] : [];
  });

test("no route file declares a named schema: they live in packages/contracts", () => {
  const files = routeFiles(ROUTES);
  expect(files.length).toBeGreaterThan(10);
  const found = files.flatMap((f) => namedSchemasIn(path.relative(root, f), fs.readFileSync(f, "utf8")));
  expect(found).toEqual([]);
});

test("the check finds named schemas, and not descriptions or ids of other things", () => {
  const src = [
    'const A = z.object({ a: z.string() }).meta({ id: "A" });',
    "const B = page(Item)",
    '  .meta({',
    '    id: "BList" });',
    'const C = z.object({}).meta({ description: "c", id: "C" });',
    "const D = z.string().register(z.globalRegistry, { id: \"D\" });",
    'z.globalRegistry.add(E, { id: "E" });',
    'const F = z.string().meta({ description: "The id: of a thing" });',
    "const G = z.object({ id: Id.meta({ description: \"An event id\" }) });",
    "const H = z.object({ id: z.string() });",
  ].join("\n");
  expect(namedSchemasIn("x.ts", src).map((s) => s.split(": ")[0]).sort()).toEqual(["x.ts:1", "x.ts:3", "x.ts:5", "x.ts:6", "x.ts:7"]);
});
