import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import os from "node:os";
import { createRedis } from "@trendgate/queues";
import { Cluster, type Redis } from "ioredis";
import { startCluster } from "../../scripts/redis-cluster.mjs";
import { waitFor } from "./config.ts";
import { spawnApp } from "./process.ts";
import { freePort } from "./free-port.ts";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

// Shared by tests/faults/{schedulers,shutdown,payload-cap}.test.ts and tests/gateway/server-limits.test.ts: a cleanup
// registry, private Redis servers (FLUSHALL touches nobody else), real gateway/worker processes, and raw HTTP over
// net sockets (to send exactly what a slow or broken client sends, and read exactly what comes back).

const cleanups: Array<() => Promise<unknown>> = [];
/** Registers how to stop something a test started; `runCleanups` (afterEach) stops it all, newest first. */
export const onCleanup = (fn: () => Promise<unknown>) => cleanups.push(fn);
export async function runCleanups() {
  for (const stop of cleanups.splice(0).reverse()) await stop().catch((err) => console.error("cleanup failed:", err));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A private, non-persistent redis-server on a free port; stopped after the test. Under the cluster suite
 * (TEST_REDIS_CLUSTER=1, see scripts/test.mjs) a private 3-master Redis Cluster instead, so the same no-loss tests
 * run on both; `flushall` then empties every master.
 */
export async function privateRedis(): Promise<{ url: string; flushall(): Promise<string> }> {
  if (process.env.TEST_REDIS_CLUSTER === "1") {
    const c = await privateCluster();
    return { url: c.url, flushall: async () => { c.flushall(); return "OK"; } };
  }
  const port = await freePort();
  const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const url = `redis://127.0.0.1:${port}`;
  const admin = createRedis(url, "client");
  onCleanup(async () => {
    admin.disconnect();
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    await exited;
  });
  await waitFor(async () => (await admin.ping().catch(() => null)) === "PONG");
  return { url, flushall: () => admin.flushall() };
}

/** A private 3-master Redis Cluster on free loopback ports (scripts/redis-cluster.mjs); stopped after the test. */
export async function privateCluster() {
  const cluster = await startCluster();
  onCleanup(async () => cluster.stop());
  return cluster;
}

export interface AppProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything the process wrote to stdout so far (JSON log lines). */
  output(): string;
}

/** A real app process (`node --import tsx apps/<app>/src/main.ts`), run from an empty directory (no .env). */
export function appProcess(app: "gateway" | "worker", env: Record<string, string>): AppProcess {
  const child = spawnApp(app, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"], cwd: os.tmpdir() });
  let out = "";
  child.stdout!.on("data", (d) => { out += d; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once("exit", (code, signal) => r({ code, signal })));
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  return { child, exited, output: () => out };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw TCP connection speaking HTTP/1.1 by hand: write anything, read complete responses, see when it closes. */
export class RawClient {
  readonly socket: net.Socket;
  readonly closed: Promise<number>; // resolves with the time it closed
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on("data", (d) => { this.buf = Buffer.concat([this.buf, d]); this.wake(); });
    socket.on("error", () => {});
    this.closed = new Promise((r) => socket.once("close", () => { r(Date.now()); this.wake(); }));
  }

  static connect(port: number, host = "127.0.0.1") {
    return new Promise<RawClient>((resolve, reject) => {
      const s = net.connect(port, host, () => resolve(new RawClient(s)));
      s.once("error", reject);
    });
  }

  write(data: string | Buffer) { this.socket.write(data); }
  get isClosed() { return this.socket.destroyed || this.socket.readableEnded; }
  /** Bytes received and not yet consumed as a response. */
  get pending() { return this.buf.toString("latin1"); }

  private wake() { for (const w of this.waiters.splice(0)) w(); }

  /** The next complete response (Content-Length framed), or throws after timeoutMs or when the socket closed first. */
  async response(timeoutMs = 15_000): Promise<RawResponse> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const r = this.take();
      if (r) return r;
      if (this.socket.destroyed) throw new Error(`connection closed before a complete response (got ${JSON.stringify(this.pending.slice(0, 200))})`);
      const left = end - Date.now();
      if (left <= 0) throw new Error(`no complete response within ${timeoutMs} ms (got ${JSON.stringify(this.pending.slice(0, 200))})`);
      await new Promise<void>((r) => { const t = setTimeout(r, left); this.waiters.push(() => { clearTimeout(t); r(); }); });
    }
  }

  private take(): RawResponse | null {
    const head = this.buf.indexOf("\r\n\r\n");
    if (head < 0) return null;
    const lines = this.buf.subarray(0, head).toString("latin1").split("\r\n");
    const status = Number(lines[0].split(" ")[1]);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) { const i = l.indexOf(":"); headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim(); }
    if (status === 100) { this.buf = this.buf.subarray(head + 4); return { status, headers, body: "" }; }
    const len = Number(headers["content-length"] ?? 0);
    if (this.buf.length < head + 4 + len) return null;
    const body = this.buf.subarray(head + 4, head + 4 + len).toString("utf8");
    this.buf = this.buf.subarray(head + 4 + len);
    return { status, headers, body };
  }

  /** Waits until the server closed the connection; throws after timeoutMs. */
  async waitClosed(timeoutMs = 15_000): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`connection still open after ${timeoutMs} ms`)), timeoutMs); });
    return Promise.race([this.closed, timeout]).finally(() => clearTimeout(timer));
  }

  destroy() { this.socket.destroy(); }
}

/** Keys matching `pattern` on every master (a Redis Cluster answers KEYS per node). */
export async function keysMatching(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  return (await Promise.all(nodes.map((n) => n.keys(pattern)))).flat();
}

/**
 * A TCP proxy in front of the Postgres of `databaseUrl` (stopped after the test): workers given `url` lose their
 * database when `proxy.down()` is called, as in an outage, while the test keeps its own connection.
 */
export async function postgresBehindProxy(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const pg = new URL(databaseUrl);
  const proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  onCleanup(() => proxy.close());
  const via = new URL(pg.href);
  via.hostname = "127.0.0.1";
  via.port = String(proxy.port);
  return { proxy, url: via.href };
}
