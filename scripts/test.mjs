// `npm test`: its own first-run steps, a clean test database and Redis db, then the whole jest suite.
// Extra arguments go to jest: npm test -- tests/gateway/auth.test.ts
import path from "node:path";
import { ensureInstalled, log, preflight, prismaGenerate, root, run } from "./lib.mjs";

ensureInstalled();
const env = {
  ...process.env,
  NODE_ENV: "test",
  DATABASE_URL: process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate_test",
  REDIS_URL: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/15",
  ADMIN_TOKEN: "test-admin-token-0123456789abcdef",
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
  LOG_LEVEL: process.env.LOG_LEVEL ?? "silent",
};
await preflight(env.DATABASE_URL, env.REDIS_URL);
prismaGenerate();
log(`resetting the test database and Redis db (${new URL(env.DATABASE_URL).pathname.slice(1)}, ${env.REDIS_URL})...`);
run(path.join(root, "node_modules/.bin/tsx"), ["scripts/reset-test-env.ts"], { env, quiet: true });
run(process.execPath, ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", "node_modules/jest/bin/jest.js", ...process.argv.slice(2)], { env });
