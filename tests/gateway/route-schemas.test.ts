import { matchesIn, matchesInRoutes } from "../helpers/source-scan.ts";

// Every named API schema (a zod schema with `.meta({ id })`, a component of the OpenAPI document) is declared in
// packages/contracts (or, for a provider's own bodies, in its connector folder), never in a route file: routes import
// them. A route file that names a schema itself, or adds one to zod's global registry, fails here.

const NAMED = [
  /\.meta\(\s*\{(?:[^}]*,)?\s*["']?id["']?\s*:/g, // .meta({ id: "X" }), .meta({ description: "…", id: "X" })
  /\bglobalRegistry\s*\.\s*add\s*\(|\.register\(\s*(?:z\s*\.\s*)?globalRegistry\b/g, // the same, by hand
];

/** Each named schema declared in `source`, as `file:line: text`. */
const namedSchemasIn = (file: string, source: string) => matchesIn(file, source, NAMED, " ");

test("no route file declares a named schema: they live in packages/contracts", () => {
  const { files, found } = matchesInRoutes(NAMED, " ");
  expect(files).toBeGreaterThan(10);
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
