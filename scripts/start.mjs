// `npm start`: every first-run step, then the gateway and all workers in one terminal.
import { spawn } from "node:child_process";
import { APP_NODE_FLAGS, firstRun, log, root } from "./lib.mjs";

await firstRun({ dev: false });
log('create an API key with: npm run api-key -- create --name "my first key"');

// The bundles (dist/), plain node: the .ts sources under tsx cost each process about 45 MB more (docs/development.md › Memory).
const app = (name) => spawn(process.execPath, [...APP_NODE_FLAGS, `dist/${name}/main.mjs`], { cwd: root, stdio: "inherit" });
const children = [app("gateway"), app("worker")];
let exiting = false;
const stopAll = (signal) => { for (const c of children) if (c.exitCode === null) c.kill(signal); };
for (const c of children) {
  c.on("exit", (code) => {
    if (!exiting) { exiting = true; process.exitCode = code ?? 1; stopAll("SIGTERM"); }
  });
}
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => { exiting = true; stopAll(s); });
