import fs from "node:fs";
import path from "node:path";
import { CONNECTORS } from "@trendgate/connectors";
import { matchesIn, REPO_ROOT } from "../helpers/source-scan.ts";

// A provider's specifics live in its folder (packages/connectors/<kind>/src/<provider>/); routes, services, workers,
// the console and the shared packages read the registry instead. A comparison with a provider's id, or a `case` on
// one, anywhere else is the `if (provider === ...)` this layout exists to keep out.

const ids = CONNECTORS.map((c) => c.manifest.id);
const quoted = `["'\`](?:${ids.join("|")})["'\`]`;
const BRANCH = [new RegExp(String.raw`[!=]==?\s*${quoted}`, "g"), new RegExp(String.raw`${quoted}\s*[!=]==?`, "g"), new RegExp(String.raw`\bcase\s+${quoted}\s*:`, "g")];

/** .ts and .tsx files under `dir`, leaving out node_modules, generated code and build output. */
const sourcesUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return ["node_modules", "generated", "dist"].includes(e.name) ? [] : sourcesUnder(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [p] : [];
  });

const branchesIn = (file: string, source: string) => matchesIn(file, source, BRANCH, " ");

test("no code outside a provider's own folder branches on a provider's id", () => {
  const files = [...sourcesUnder(path.join(REPO_ROOT, "apps")), ...sourcesUnder(path.join(REPO_ROOT, "packages"))]
    .filter((f) => !f.startsWith(path.join(REPO_ROOT, "packages/connectors")));
  expect(files.length).toBeGreaterThan(200);
  const found = files.flatMap((f) => branchesIn(path.relative(REPO_ROOT, f), fs.readFileSync(f, "utf8")));
  expect(found).toEqual([]);
});

test("the check finds such a branch, and leaves a registry lookup alone", () => {
  const src = [
    'if (provider === "slack") postCard();',
    "if ('google_ads' !== connection.provider) return;",
    "  case `teams`:",
    'const connector = registry.get(connection.provider); // "slack" or any other',
    'const label = { provider: "slack" };',
  ].join("\n");
  expect(branchesIn("x.ts", src).map((s) => s.split(": ")[0])).toEqual(["x.ts:1", "x.ts:2", "x.ts:3"]);
});
