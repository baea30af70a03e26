// `npm run check:imports`: fails on a package importing an app, and on any import circle among the TypeScript files of apps/ and packages/ (.ts and the
// console's .tsx), type-only imports included (a type import still ties the files' changes together). Workspace
// packages are resolved to their source entry points, so a circle that crosses packages is found too, not only one
// inside a folder.
import fs from "node:fs";
import path from "node:path";
import madge from "madge";

const root = path.resolve(import.meta.dirname, "..");

/** `@trendgate/<name>` -> its entry file, for every workspace package that declares one. */
function workspacePaths() {
  const { workspaces } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const paths = {};
  for (const pattern of workspaces) {
    const parent = path.join(root, pattern.replace(/\/\*$/, ""));
    for (const dir of fs.readdirSync(parent)) {
      const manifest = path.join(parent, dir, "package.json");
      if (!fs.existsSync(manifest)) continue;
      const { name, exports } = JSON.parse(fs.readFileSync(manifest, "utf8"));
      const entry = typeof exports === "string" ? exports : exports?.["."];
      if (name && entry) paths[name] = [path.relative(root, path.join(parent, dir, entry))];
    }
  }
  return paths;
}

const result = await madge(["apps", "packages"].map((d) => path.join(root, d)), {
  baseDir: root,
  fileExtensions: ["ts", "tsx"],
  excludeRegExp: [/node_modules/, /[\\/]generated[\\/]/],
  tsConfig: { compilerOptions: { baseUrl: root, moduleResolution: "bundler", allowImportingTsExtensions: true, paths: workspacePaths() } },
});
const circles = result.circular();
if (circles.length) {
  process.stderr.write(`${circles.length} import circle(s) in apps/ and packages/:\n`);
  for (const c of circles) process.stderr.write(`  ${[...c, c[0]].join(" > ")}\n`);
  process.exit(1);
}
// Layers: apps are built from packages, never the other way round.
const upward = Object.entries(result.obj()).flatMap(([file, deps]) =>
  file.startsWith("packages/") ? deps.filter((d) => d.startsWith("apps/")).map((d) => `${file} > ${d}`) : []);
if (upward.length) {
  process.stderr.write(`${upward.length} import(s) of an app from a package:\n${upward.map((u) => `  ${u}\n`).join("")}`);
  process.exit(1);
}
const files = Object.keys(result.obj()).length;
process.stdout.write(`no import circle in apps/ and packages/, no package importing an app (${files} files)\n`);
