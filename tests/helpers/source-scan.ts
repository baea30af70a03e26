import fs from "node:fs";
import path from "node:path";

// Reading the repository's own source for the structure guards (tests/gateway/route-*.test.ts).

export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
export const ROUTES_DIR = path.join(REPO_ROOT, "apps/gateway/src/routes");

/** Every .ts file under `dir`. */
export const tsFilesUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFilesUnder(p) : e.name.endsWith(".ts") ? [p] : [];
  });

/** Each match of the (global) patterns in `source`, as `file:line: text` with white space collapsed to `join`. */
export function matchesIn(file: string, source: string, patterns: RegExp[], join = ""): string[] {
  const found: string[] = [];
  for (const re of patterns) {
    for (const m of source.matchAll(re)) {
      const line = source.slice(0, m.index).split("\n").length;
      found.push(`${file}:${line}: ${m[0].replace(/\s+/g, join)}`);
    }
  }
  return found;
}

/** The matches in every route file, paths relative to the repository. */
export const matchesInRoutes = (patterns: RegExp[], join = ""): { files: number; found: string[] } => {
  const files = tsFilesUnder(ROUTES_DIR);
  return { files: files.length, found: files.flatMap((f) => matchesIn(path.relative(REPO_ROOT, f), fs.readFileSync(f, "utf8"), patterns, join)) };
};
