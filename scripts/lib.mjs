// First-run helpers shared by `npm start` and `npm test`. Plain Node, no dependencies: they run before `npm install`.
import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "..");
const npmCmd = process.platform === "win32" ? "npm.cmd" : "npm";

export function log(msg) { process.stdout.write(`[trendgate] ${msg}\n`); }

/** The Node the README promises (package.json engines): older ones fail in confusing ways, so say it in one line. */
export function checkNodeVersion() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 20 || (major === 20 && minor >= 19)) return;
  process.stderr.write(`[trendgate] Node.js 20.19 or newer is needed (this is ${process.version}); see README › Two commands\n`);
  process.exit(1);
}

/** Whether the dev dependencies (tests, stand-ins, sandbox, benches) are installed. */
const devInstalled = () => fs.existsSync(path.join(root, "node_modules/jest/package.json"));

/**
 * `npm install` when node_modules is missing or older than package-lock.json, or lacks the dev dependencies the
 * caller needs. The service alone (`npm start`, `npm run setup`) needs a third of the packages, so it installs only
 * those (`--omit=dev`); tests, the demo and benches install the rest when they first run.
 */
export function ensureInstalled({ dev = true } = {}) {
  checkNodeVersion();
  const marker = path.join(root, "node_modules/.package-lock.json");
  const lock = path.join(root, "package-lock.json");
  const fresh = fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs;
  if (fresh && (!dev || devInstalled())) return;
  if (!dev && !devInstalled()) { // never drop dev dependencies that are already there
    log("installing the service's dependencies (npm install --omit=dev)...");
    run(npmCmd, ["install", "--omit=dev", "--no-audit", "--no-fund"]);
    return;
  }
  log("installing dependencies (npm install)...");
  run(npmCmd, ["install", "--no-audit", "--no-fund"]);
}

/** A new private Ed25519 key as a one-line JWK, for EXECUTOR_SIGNING_KEY. */
const executorSigningKey = () => JSON.stringify(crypto.generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }));

/**
 * Creates .env from .env.example on first run, with freshly generated secrets; an older .env gets the secrets that
 * were added since (EXECUTOR_SIGNING_KEY), so an upgrade needs no hand edit.
 */
export function ensureEnvFile() {
  const env = path.join(root, ".env");
  if (fs.existsSync(env)) {
    const text = fs.readFileSync(env, "utf8");
    if (/^EXECUTOR_SIGNING_KEY=\S/m.test(text)) return;
    const next = /^EXECUTOR_SIGNING_KEY=$/m.test(text)
      ? text.replace(/^EXECUTOR_SIGNING_KEY=$/m, `EXECUTOR_SIGNING_KEY=${executorSigningKey()}`)
      : `${text.replace(/\n?$/, "\n")}EXECUTOR_SIGNING_KEY=${executorSigningKey()}\n`;
    fs.writeFileSync(env, next, { mode: 0o600 });
    log("added a new EXECUTOR_SIGNING_KEY to .env");
    return;
  }
  const text = fs.readFileSync(path.join(root, ".env.example"), "utf8")
    .replace(/^ADMIN_TOKEN=.*$/m, `ADMIN_TOKEN=${crypto.randomBytes(24).toString("hex")}`)
    .replace(/^ENCRYPTION_KEY=.*$/m, `ENCRYPTION_KEY=${crypto.randomBytes(32).toString("base64")}`)
    .replace(/^EXECUTOR_SIGNING_KEY=.*$/m, `EXECUTOR_SIGNING_KEY=${executorSigningKey()}`);
  fs.writeFileSync(env, text, { mode: 0o600 });
  log("created .env with new random ADMIN_TOKEN, ENCRYPTION_KEY and EXECUTOR_SIGNING_KEY (keep it out of version control)");
}

export function loadEnvFile() {
  const env = path.join(root, ".env");
  if (fs.existsSync(env)) process.loadEnvFile(env);
}

// Each hint names the address the URL asked for (a hint for the default port sends people to start the wrong server).
// The compose services publish the default ports only.
const compose = (service, port, defPort) => `\`docker compose up -d ${service}\`${port === defPort ? "" : ` (it listens on ${defPort})`}`;
const HOW_TO_START = {
  Postgres: (host, port) => `start it on ${host}:${port} with \`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\`, or ${compose("postgres", port, 5432)}`,
  Redis: (host, port) => `start it on ${host}:${port} with \`redis-server --daemonize yes --port ${port}\`, or ${compose("redis", port, 6379)}`,
};

function reachable(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 2000 });
    s.once("connect", () => { s.destroy(); resolve(true); });
    s.once("timeout", () => { s.destroy(); resolve(false); });
    s.once("error", () => resolve(false));
  });
}

/** Exits with one line per unreachable dependency, saying how to start it. */
export async function preflight(databaseUrl, redisUrl) {
  const deps = [
    ["Postgres", "DATABASE_URL", new URL(databaseUrl), 5432],
    // A cluster URL (redis+cluster://h1:p1,h2:p2) is checked at its first seed node.
    ["Redis", "REDIS_URL", new URL(redisUrl.replace(/^(rediss?)\+cluster:\/\/([^,/]*).*$/, "$1://$2")), 6379],
  ];
  let ok = true;
  for (const [name, variable, url, defPort] of deps) {
    const host = url.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1";
    const port = Number(url.port || defPort);
    if (!(await reachable(host, port))) {
      process.stderr.write(`${name} is not reachable at ${host}:${port} (${variable}): ${HOW_TO_START[name](host, port)}.\n`);
      ok = false;
    }
  }
  if (!ok) process.exit(69); // EX_UNAVAILABLE
}

/**
 * Node options for the gateway and the workers in production (`npm start`, the Docker image; keep docker-compose.yml
 * and the Dockerfile in step). They bound resident memory (docs/development.md › Memory), measured with `npm run bench -- reports`:
 * --liftoff-only keeps Prisma's query compiler (WebAssembly) on V8's baseline compiler: the optimizing tier's code and
 *   compile memory cost about 50 MB per process, for Prisma queries a fraction of a millisecond faster.
 * --max-semi-space-size=4 and --heap-growing-percent=50: a collection sooner rather than a heap grown by up to 4x, so
 *   the garbage of a report export's 10,000-row pages cannot pile up to 100 MB or more before it is collected.
 */
export const APP_NODE_FLAGS = ["--liftoff-only", "--max-semi-space-size=4", "--heap-growing-percent=50"];

/** Bundles the apps to dist/ (scripts/build.mjs; loaded late, esbuild is part of the install). */
export async function buildApps() {
  const { buildApps: build } = await import("./build.mjs");
  await build({ quiet: true });
}

export function prismaGenerate() { run(path.join(root, "node_modules/.bin/prisma"), ["generate"], { quiet: true }); }
export function prismaMigrate() { run(path.join(root, "node_modules/.bin/prisma"), ["migrate", "deploy"], { quiet: true }); }

/**
 * Every first-run step, each a no-op when already done: installs (without the dev dependencies when `dev` is false), writes or completes .env with fresh secrets and
 * loads it, checks Postgres and Redis, generates the Prisma client, applies migrations, bundles the apps to dist/.
 */
export async function firstRun({ dev = true } = {}) {
  ensureInstalled({ dev });
  ensureEnvFile();
  loadEnvFile();
  await preflight(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate", process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  log("generating the Prisma client and applying migrations...");
  prismaGenerate();
  prismaMigrate();
  log("bundling the gateway and the workers (npm run build)...");
  await buildApps();
}

export function run(cmd, args, { quiet = false, env = process.env } = {}) {
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit", encoding: "utf8" });
  if (r.status !== 0) {
    if (quiet) process.stderr.write((r.stdout ?? "") + (r.stderr ?? ""));
    process.stderr.write(`[trendgate] \`${path.basename(cmd)} ${args.join(" ")}\` failed (exit ${r.status})\n`);
    process.exit(r.status ?? 1);
  }
  return r.stdout;
}

export { execFileSync };

/** `n` distinct free TCP ports on loopback (asked of the kernel, all held open together, then released). */
export async function freePorts(n) {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => resolve(s));
  })));
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}
