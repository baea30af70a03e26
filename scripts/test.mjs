// `npm test`: its own first-run steps, a clean test database and Redis db, then the whole jest suite; then the
// cluster suite: the no-loss, end-to-end and Redis-heavy tests again on a local 3-master Redis Cluster
// (scripts/redis-cluster.mjs, started on free loopback ports and stopped afterwards).
// Extra arguments go to jest and run only those in the main suite: npm test -- tests/gateway/auth.test.ts
// `npm test -- --cluster [files]` runs only the cluster suite (or those files of it, on a cluster).
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

/** Run again on a Redis Cluster: what kills workers or Redis, the end-to-end path, and every Redis-heavy feature. */
const CLUSTER_SUITE = [
  "tests/cluster", "tests/faults", "tests/operator/e2e.test.ts", "tests/trends/engine.test.ts", "tests/operator/pacing.test.ts", "tests/stream",
  "tests/webhooks/delivery.test.ts", "tests/webhooks/rate-limit.test.ts", "tests/gateway/rate-limit.test.ts", "tests/gateway/idempotency.test.ts",
];

ensureInstalled();
const args = process.argv.slice(2);
const clusterOnly = args.includes("--cluster");
const files = args.filter((a) => a !== "--cluster");
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
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => process.exit(130));
const jest = (suiteEnv, jestArgs) => {
  log(`resetting the test database and Redis (${new URL(env.DATABASE_URL).pathname.slice(1)}, ${suiteEnv.REDIS_URL})...`);
  run(path.join(root, "node_modules/.bin/tsx"), ["scripts/reset-test-env.ts"], { env: suiteEnv, quiet: true });
  run(process.execPath, ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", "node_modules/jest/bin/jest.js", ...jestArgs], { env: suiteEnv });
};

if (!clusterOnly) jest(env, files);
if (clusterOnly || !files.length) {
  const { startCluster } = await import("./redis-cluster.mjs");
  const cluster = await startCluster();
  log(`started a 3-master Redis Cluster on 127.0.0.1:${cluster.ports.join(",")} for the cluster suite`);
  process.on("exit", () => cluster.stop()); // also when a failed run exits early
  // --forceExit: after a master restart, BullMQ can leave a worker's fetch loop parked for good (the shutdown stops
  // waiting for it: closeWorker in apps/worker/src/run-workers.ts), and its timers would keep a test process alive
  // where a worker process would simply exit.
  jest({ ...env, REDIS_URL: cluster.url, TEST_REDIS_CLUSTER: "1" }, ["--forceExit", ...(files.length ? files : CLUSTER_SUITE)]);
}
