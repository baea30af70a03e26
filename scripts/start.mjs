// `npm start`: every first-run step, then the gateway and all workers in one terminal.
import { spawn } from "node:child_process";
import path from "node:path";
import { ensureEnvFile, ensureInstalled, loadEnvFile, log, preflight, prismaGenerate, prismaMigrate, root } from "./lib.mjs";

ensureInstalled();
ensureEnvFile();
loadEnvFile();
const db = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate";
const redis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
await preflight(db, redis);
log("generating the Prisma client and applying migrations...");
prismaGenerate();
prismaMigrate();
log('create an API key with: npm run api-key -- create --name "my first key"');

// `node --import tsx` (one process) rather than the tsx CLI, which SIGKILLs a child slow to acknowledge SIGTERM.
const app = (entry) => spawn(process.execPath, ["--import", "tsx", entry], { cwd: root, stdio: "inherit" });
const children = [app("apps/gateway/src/main.ts"), app("apps/worker/src/main.ts")];
let exiting = false;
const stopAll = (signal) => { for (const c of children) if (c.exitCode === null) c.kill(signal); };
for (const c of children) {
  c.on("exit", (code) => {
    if (!exiting) { exiting = true; process.exitCode = code ?? 1; stopAll("SIGTERM"); }
  });
}
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => { exiting = true; stopAll(s); });
