// `npm test`: its own first-run steps, a clean test database and Redis db, then the whole jest suite.
// Extra arguments go to jest: npm test -- tests/gateway/auth.test.ts
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureInstalled, log, preflight, prismaGenerate, root, run } from "./lib.mjs";

/** Two test runs on one machine would reset each other's database mid-run: the second waits for the first. */
async function lockTestDatabase(name) {
  const lock = path.join(os.tmpdir(), `trendgate-test-${name}.lock`);
  for (let waited = false; ; ) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
      process.on("exit", () => fs.rmSync(lock, { recursive: true, force: true }));
      return;
    } catch {
      // The other run may be between mkdir and writing its pid, or just removing the lock: look again shortly
      // (a lock left without a pid for 5 s is from a run that died right after mkdir).
      let pid = 0;
      try { pid = Number(fs.readFileSync(path.join(lock, "pid"), "utf8").trim() || 0); } catch { /* not written yet */ }
      if (!pid) {
        let age = 0;
        try { age = Date.now() - fs.statSync(lock).mtimeMs; } catch { continue; }
        if (age > 5000) fs.rmSync(lock, { recursive: true, force: true });
        else await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      let alive = false;
      try { alive = pid > 0 && process.kill(pid, 0); } catch { alive = false; }
      if (!alive) { fs.rmSync(lock, { recursive: true, force: true }); continue; }
      if (!waited) { log(`another test run (pid ${pid}) is using ${name}; waiting for it to finish...`); waited = true; }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

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
await lockTestDatabase(new URL(env.DATABASE_URL).pathname.slice(1));
prismaGenerate();
log(`resetting the test database and Redis db (${new URL(env.DATABASE_URL).pathname.slice(1)}, ${env.REDIS_URL})...`);
run(path.join(root, "node_modules/.bin/tsx"), ["scripts/reset-test-env.ts"], { env, quiet: true });
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => process.exit(130));
run(process.execPath, ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", "node_modules/jest/bin/jest.js", ...process.argv.slice(2)], { env });
