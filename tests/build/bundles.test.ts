import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { createAccount, createApiKey, createDb } from "@trendgate/db";
import { waitFor } from "../helpers/config.ts";
import { freePort } from "../helpers/free-port.ts";

// What `npm start` and the Docker image run: the bundles of scripts/build.mjs under APP_NODE_FLAGS. Built here into
// a folder of the checkout (beside node_modules, which the bundles import from), never into dist/, which a running
// `npm start` may be using.

const root = path.resolve(import.meta.dirname, "../..");
const outdir = path.join(root, `.build-test-${process.pid}`);
const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8");
/** APP_NODE_FLAGS as scripts/lib.mjs spells it. */
const appFlags = () => JSON.parse(/export const APP_NODE_FLAGS = (\[[^\]]*\]);/.exec(read("scripts/lib.mjs"))![1]) as string[];
beforeAll(() => { execFileSync(process.execPath, ["scripts/build.mjs", outdir], { cwd: root, stdio: "pipe", timeout: 60_000 }); }, 60_000);
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

test("the Docker image, docker-compose.yml and the bench run the apps with the same Node options as npm start", () => {
  const flags = appFlags();
  expect(flags.length).toBeGreaterThan(0);
  const quoted = (app: string) => JSON.stringify(["node", ...flags, `dist/${app}/main.mjs`]).replaceAll(",", ", ");
  expect(read("Dockerfile")).toContain(`CMD ${quoted("gateway")}`);
  expect(read("docker-compose.yml")).toContain(`command: ${quoted("gateway")}`);
  expect(read("docker-compose.yml")).toContain(`command: ${quoted("worker")}`);
  expect(read("bench/lib.ts")).toContain(`export const APP_NODE_FLAGS = ${JSON.stringify(flags).replaceAll(",", ", ")};`);
});

test("the gateway bundle serves an authenticated request (Prisma's query compiler loaded from the bundle's .wasm)", async () => {
  expect(fs.existsSync(path.join(outdir, "prisma-query-compiler.wasm"))).toBe(true);
  const db = createDb(process.env.DATABASE_URL!);
  const account = await createAccount(db, "bundle");
  const { key } = await createApiKey(db, account.id, "k");
  await db.$disconnect();

  const port = await freePort();
  const child = spawn(process.execPath, [...appFlags(), path.join(outdir, "gateway/main.mjs")], { cwd: root, env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", QUEUE_PREFIX: `bd${port}` }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  try {
    await waitFor(() => new Promise<boolean>((r) => http.get(`http://127.0.0.1:${port}/status`, (res) => { res.resume(); r(res.statusCode === 200); }).on("error", () => r(false))), { timeoutMs: 20_000 });
    const res = await fetch(`http://127.0.0.1:${port}/api/keys`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { name: string }[] }).data.map((k) => k.name)).toEqual(["k"]);
    // A backtest runs on a backtest thread, whose module the bundle carries beside the gateway's.
    const preview = await fetch(`http://127.0.0.1:${port}/api/integrations/webhooks/preview`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ trigger_type: "trend_detected", threshold_value: 0, delivery_mode: "instant_stream", cooldown_seconds: 0, days: 1 }),
    });
    expect(preview.status).toBe(200);
    expect(await preview.json()).toMatchObject({ events_replayed: 0, deliveries: 0, truncated: false });
    // The web console: the bundled gateway finds the console's sources (through its workspace link) and bundles them.
    const page = await (await fetch(`http://127.0.0.1:${port}/console/`)).text();
    const script = /src="(\/console\/assets\/app\.[\w-]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`http://127.0.0.1:${port}${script}`);
    expect([js.status, js.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited).toBe(0);
  expect(stderr).toBe("");
}, 40_000);

test("the worker bundle starts and stops cleanly on SIGTERM", async () => {
  const child = spawn(process.execPath, [...appFlags(), path.join(outdir, "worker/main.mjs")], { cwd: root, env: { ...process.env, WORKER_QUEUES: "report-exports", QUEUE_PREFIX: `bw${process.pid}`, LOG_LEVEL: "info" }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "", stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  await waitFor(async () => stdout.includes('"msg":"workers started"') || child.exitCode !== null, { timeoutMs: 20_000 });
  expect(child.exitCode).toBeNull();
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
  expect(stderr).toBe("");
}, 30_000);
