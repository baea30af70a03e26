import { spawnSync } from "node:child_process";
import http from "node:http";
import { createAccount, createApiKey, createDb } from "@trendgate/db";
import { waitFor } from "../helpers/config.ts";

import os from "node:os";
import path from "node:path";

import { appEntry, nodeArgs, spawnApp } from "../helpers/process.ts";
import { freePort } from "../helpers/free-port.ts";

// Run from an empty directory so a developer's .env cannot fill in what the test removes.
const isolated = { cwd: os.tmpdir(), encoding: "utf8" as const, timeout: 20_000 };
describe("configuration at start-up", () => {
  test.each([
    ["DATABASE_URL", "mysql://localhost/x", /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/],
    ["PORT", "seventy", /PORT /],
    ["ENCRYPTION_KEY", "short", /ENCRYPTION_KEY must be 32 random bytes/],
    ["RATE_LIMIT_PLANS", "pro:10", /RATE_LIMIT_PLANS must define the plan `free`/],
  ])("a malformed %s stops the gateway with one line naming it", (name, value, message) => {
    const r = spawnSync(process.execPath, nodeArgs(appEntry("gateway")), { ...isolated, env: { ...process.env, [name]: value } });
    expect(r.status).toBe(78);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  test("a missing secret stops the worker too, naming it", () => {
    const env = { ...process.env };
    delete env.ADMIN_TOKEN;
    const r = spawnSync(process.execPath, nodeArgs(appEntry("worker")), { ...isolated, env });
    expect(r.status).toBe(78);
    expect(r.stderr.trim()).toMatch(/^Invalid configuration: ADMIN_TOKEN is required/);
  });
});

test("SIGTERM lets an in-flight request finish before the gateway exits", async () => {
  const db = createDb(process.env.DATABASE_URL!);
  const account = await createAccount(db, "shutdown");
  const { key } = await createApiKey(db, account.id, "k");
  await db.$disconnect();

  const port = await freePort();
  const child = spawnApp("gateway", { env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", QUEUE_PREFIX: `sd${port}` }, stdio: "ignore" });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  await waitFor(() => new Promise<boolean>((r) => http.get(`http://127.0.0.1:${port}/status`, (res) => { res.resume(); r(res.statusCode === 200); }).on("error", () => r(false))), { timeoutMs: 20_000 });

  // Start a request and send only half its body, then signal the gateway.
  const body = JSON.stringify({ signals: [{ id: "sd-1", source: "x", topic: "t", category: "tech", count: 1, observed_at: new Date().toISOString() }] });
  const response = new Promise<{ status?: number; body: string }>((resolve, reject) => {
    const req = http.request({ port, host: "127.0.0.1", method: "POST", path: "/api/signals", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode, body: text }));
    });
    req.on("error", reject);
    req.write(body.slice(0, 20));
    setTimeout(() => {
      child.kill("SIGTERM");
      setTimeout(() => req.end(body.slice(20)), 300);
    }, 200);
  });
  const res = await response;
  expect(res.status).toBe(202);
  expect(JSON.parse(res.body).accepted).toBe(1);
  expect(await exited).toBe(0);
  // And it no longer accepts connections.
  await expect(new Promise((resolve, reject) => http.get(`http://127.0.0.1:${port}/status`, resolve).on("error", reject))).rejects.toThrow(/ECONNREFUSED/);
}, 40_000);
