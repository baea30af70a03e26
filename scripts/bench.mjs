// `npm run bench [-- section ...]`: first-run steps, then the benchmarks (sections: gateway, webhooks, trends,
// workflow, conversions, reports, fleet; default all).
import { buildApps, ensureEnvFile, ensureInstalled, loadEnvFile, preflight, prismaGenerate, prismaMigrate, run } from "./lib.mjs";

ensureInstalled();
ensureEnvFile();
loadEnvFile();
await preflight(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate", process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
prismaGenerate();
prismaMigrate();
await buildApps(); // the report section runs the bundles, as `npm start` does
run(process.execPath, ["--import", "tsx", "bench/index.ts", ...process.argv.slice(2)]);
