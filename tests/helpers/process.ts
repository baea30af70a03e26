import { spawn, type SpawnOptions } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

// Apps run as `node --import tsx <entry>`: one process, so signals reach the app itself (the tsx CLI wrapper
// SIGKILLs a child that is slow to acknowledge SIGTERM). The loader is given by absolute URL so any cwd works.
const loader = pathToFileURL(path.resolve("node_modules/tsx/dist/loader.mjs")).href;

export const appEntry = (app: "gateway" | "worker") => path.resolve(`apps/${app}/src/main.ts`);
export const nodeArgs = (entry: string, ...args: string[]) => ["--import", loader, entry, ...args];
export const spawnApp = (app: "gateway" | "worker", opts: SpawnOptions) => spawn(process.execPath, nodeArgs(appEntry(app)), opts);
