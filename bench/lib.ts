import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import autocannon from "autocannon";

export const root = path.resolve(import.meta.dirname, "..");

export interface LoadResult { rps: number; p50: number; p99: number; errors: number; non2xx: number }

/** Starts a TypeScript entry point in its own process (tsx) and waits until GET /status or a "ready" message. */
export async function startServer(entry: string, env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = fork(path.join(root, entry), [], { execArgv: ["--import", "tsx"], cwd: root, env: { ...process.env, ...env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit", "ipc"] });
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${entry} did not start`)), 30_000);
    child.once("message", () => { clearTimeout(t); resolve(); });
    child.once("exit", (c) => reject(new Error(`${entry} exited with ${c}`)));
    const poll = () => http.get(`http://127.0.0.1:${port}/status`, (r) => { r.resume(); clearTimeout(t); resolve(); }).on("error", () => setTimeout(poll, 200));
    poll();
  });
  return child;
}

/** The Node options production runs the apps with: APP_NODE_FLAGS of scripts/lib.mjs (keep in step). */
export const APP_NODE_FLAGS = ["--liftoff-only", "--max-semi-space-size=4", "--heap-growing-percent=50"];

/**
 * Starts an app the way `npm start` and the Docker image run it: its bundle (dist/<app>/main.mjs, built by
 * `npm run bench` before any section runs) under plain node with APP_NODE_FLAGS. For what the processes cost
 * (memory), rather than what tsx costs.
 */
export function startApp(app: "gateway" | "worker", env: Record<string, string>): ChildProcess {
  return fork(path.join(root, "dist", app, "main.mjs"), [], { execArgv: APP_NODE_FLAGS, cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "inherit", "ipc"] });
}

/** The gateway's bundle (see startApp), once GET /status answers. */
export async function startGateway(env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = startApp("gateway", { ...env, PORT: String(port) });
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("gateway did not start")), 30_000);
    child.once("exit", (c) => reject(new Error(`gateway exited with ${c}`)));
    const poll = () => http.get(`http://127.0.0.1:${port}/status`, (r) => { r.resume(); clearTimeout(t); resolve(); }).on("error", () => setTimeout(poll, 200));
    poll();
  });
  return child;
}

export async function stopServer(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

/** autocannon against one URL; `{n}` in header values and the body becomes a unique number per request. */
export async function load(opts: { url: string; method?: "POST" | "GET"; headers?: Record<string, string>; body?: string; seconds: number; connections: number }): Promise<LoadResult> {
  let n = 0;
  const r = await autocannon({
    url: opts.url,
    duration: opts.seconds,
    connections: opts.connections,
    requests: [{
      method: opts.method ?? "POST",
      setupRequest: (req: any) => {
        const id = `${process.pid}-${Date.now()}-${n++}`;
        const headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k, v.replaceAll("{n}", id)]));
        return { ...req, headers, body: opts.body?.replaceAll("{n}", id) };
      },
    }],
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

/** Polls `fn` every `everyMs` until it returns true; throws `what` after `timeoutMs`. */
export async function until(fn: () => Promise<boolean>, timeoutMs = 300_000, everyMs = 20, what = "bench timed out") {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(what);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** SIGTERM, then SIGKILL after `hardMs`: a process stuck in its shutdown must not hang a bench. */
export async function stopProcess(child: ChildProcess, hardMs = 30_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const hard = setTimeout(() => child.kill("SIGKILL"), hardMs);
  await exited;
  clearTimeout(hard);
}

/** Peak resident memory of a live process (VmHWM in /proc), MB; NaN once it is gone or off Linux. */
export function peakRssMb(pid: number | undefined): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return kb ? Number(kb[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** A loopback port free right now (the OS picks it; closed again before it is returned). */
export const freePort = () => new Promise<number>((resolve) => {
  const s = http.createServer().listen(0, "127.0.0.1", () => { const p = (s.address() as AddressInfo).port; s.close(() => resolve(p)); });
});
