// A local Redis Cluster on loopback: N masters (default 3), no replicas, nothing kept on disk but each node's
// cluster identity (nodes-<port>.conf), so a master killed and started again comes back empty, owning its old slots.
// Used by `npm test` (the cluster suite) and by tests that kill a master; also to try the fleet on a cluster:
//   node scripts/redis-cluster.mjs start [--port 7100] [--masters 3]   prints the REDIS_URL to use
//   node scripts/redis-cluster.mjs stop [--port 7100] [--masters 3]
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePorts } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cli = (port, ...args) => execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const alive = (port) => { try { return cli(port, "ping") === "PONG"; } catch { return false; } };

async function until(what, fn, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`redis cluster: ${what} not reached within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * Starts one node (daemonized, so it outlives a crashed caller only until `stop`). The bus port is given
 * explicitly, so callers may pick any free ports. cluster-require-full-coverage is off: while one master is down,
 * the others keep serving their slots (the queues on them keep working).
 */
async function startNode(dir, port, busPort) {
  execFileSync("redis-server", [
    "--port", String(port), "--cluster-port", String(busPort), "--bind", "127.0.0.1",
    "--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`, "--cluster-node-timeout", "2000",
    "--cluster-require-full-coverage", "no", "--save", "", "--appendonly", "no",
    "--dir", dir, "--daemonize", "yes", "--pidfile", path.join(dir, `redis-${port}.pid`), "--logfile", path.join(dir, `redis-${port}.log`),
  ], { stdio: "ignore" });
  await until(`node ${port} up`, () => alive(port));
}

const pidOf = (dir, port) => Number(fs.readFileSync(path.join(dir, `redis-${port}.pid`), "utf8").trim());
const stateOk = (port) => { try { return /cluster_state:ok/.test(cli(port, "cluster", "info")); } catch { return false; } };

/**
 * Starts `ports.length` masters and joins them into one cluster (slots split evenly by redis-cli).
 * Returns the REDIS_URL naming it and controls for tests: flush every master, kill -9 a master, start it again empty.
 */
export async function startCluster({ masters = 3, ports, busPorts, dir = fs.mkdtempSync(path.join(os.tmpdir(), "trendgate-cluster-")) } = {}) {
  if (!ports) { const free = await freePorts(2 * masters); ports = free.slice(0, masters); busPorts = free.slice(masters); }
  busPorts ??= ports.map((p) => p + 10000);
  fs.mkdirSync(dir, { recursive: true });
  for (const [i, port] of ports.entries()) {
    if (alive(port)) throw new Error(`redis cluster: port ${port} is already serving a Redis`);
    fs.rmSync(path.join(dir, `nodes-${port}.conf`), { force: true });
    await startNode(dir, port, busPorts[i]);
  }
  execFileSync("redis-cli", ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"], { stdio: "ignore" });
  await until("cluster_state:ok on every node", () => ports.every(stateOk));
  const cluster = {
    dir,
    ports,
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(",")}`,
    flushall: () => { for (const p of ports) cli(p, "flushall"); },
    /** kill -9 one master: everything it held is gone (nothing is persisted). */
    kill(i) { process.kill(pidOf(dir, ports[i]), "SIGKILL"); },
    /** Starts a killed master again: same identity and slots, no data; resolves once the cluster is whole. */
    async restart(i) {
      await until(`node ${ports[i]} down`, () => !alive(ports[i]));
      await startNode(dir, ports[i], busPorts[i]);
      await until("cluster_state:ok after the restart", () => ports.every(stateOk), 30_000);
    },
    stop() {
      stopCluster(ports);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

/** Stops the nodes on `ports` (SHUTDOWN NOSAVE; a node already down is skipped). */
export function stopCluster(ports) {
  for (const p of ports) { try { cli(p, "shutdown", "nosave"); } catch { /* already down */ } }
}

export const cliDir = (port) => path.join(os.tmpdir(), `trendgate-cluster-${port}`);

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [cmd = "start", ...rest] = process.argv.slice(2);
  const arg = (name, dflt) => { const i = rest.indexOf(`--${name}`); return i >= 0 ? Number(rest[i + 1]) : dflt; };
  const port = arg("port", 7100);
  const ports = Array.from({ length: arg("masters", 3) }, (_, i) => port + i);
  if (cmd === "start") {
    const c = await startCluster({ ports, dir: cliDir(port) });
    console.log(`Redis Cluster up: ${ports.length} masters on 127.0.0.1:${ports.join(",")}\nREDIS_URL=${c.url}`);
  } else if (cmd === "stop") {
    stopCluster(ports);
    fs.rmSync(cliDir(port), { recursive: true, force: true });
    console.log(`stopped the Redis Cluster on ports ${ports.join(",")}`);
  } else {
    console.error("usage: node scripts/redis-cluster.mjs start|stop [--port 7100] [--masters 3]");
    process.exit(64);
  }
}
