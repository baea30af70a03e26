// `npm run setup`: every first-run step of `npm start` without starting anything (installs, writes or completes
// .env with fresh secrets, checks Postgres and Redis, generates the Prisma client, applies migrations, bundles the
// apps to dist/).
import { buildApps, ensureEnvFile, ensureInstalled, loadEnvFile, log, preflight, prismaGenerate, prismaMigrate } from "./lib.mjs";

ensureInstalled();
ensureEnvFile();
loadEnvFile();
await preflight(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate", process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
log("generating the Prisma client and applying migrations...");
prismaGenerate();
prismaMigrate();
log("bundling the gateway and the workers (npm run build)...");
await buildApps();
log("ready: `npm start` runs the gateway and the workers");
