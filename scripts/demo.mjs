// `npm run demo`: your first trend, on your machine. Every first-run step of `npm start`, then the sandbox's
// stand-ins, the gateway and the workers pointed at them (nothing written to .env), and a demo account wired to the
// sandbox: a webhook subscription to the sandbox's receiver, n8n, and Slack. `npm run demo:burst` then sends a burst.
import { APP_NODE_FLAGS, buildApps, ensureEnvFile, ensureInstalled, loadEnvFile, log, preflight, prismaGenerate, prismaMigrate, root, run } from "./lib.mjs";

const started = Date.now();
ensureInstalled();
ensureEnvFile();
loadEnvFile();
await preflight(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate", process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
log("generating the Prisma client and applying migrations...");
prismaGenerate();
prismaMigrate();
log("bundling the gateway and the workers (npm run build)...");
await buildApps({ quiet: true });
run(process.execPath, ["--import", "tsx", "scripts/demo-stack.ts"], {
  env: { ...process.env, DEMO_SETUP_MS: String(Date.now() - started), DEMO_APP_NODE_FLAGS: JSON.stringify(APP_NODE_FLAGS), DEMO_ROOT: root },
});
