// The README's "Your first trend", run as written: `npm run demo` (first-run steps, the sandbox, the gateway and the
// workers, a demo account wired to the sandbox), then `npm run demo:burst`, which ends only when the sandbox has
// received the trend as a signature-verified webhook, an n8n push and a Slack card. Only the addresses differ (free
// ports, this worker's database, its own queue prefix), so it runs beside the suite.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freePort, freePortRange } from "../helpers/free-port.ts";

const root = path.resolve(import.meta.dirname, "../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

let demo: ChildProcess | null = null;
// Ctrl-C in a terminal signals the whole foreground process group (npm, the demo, its apps): so does this.
afterAll(async () => {
  if (demo && demo.exitCode === null) {
    const exited = new Promise((r) => demo!.once("exit", r));
    process.kill(-demo.pid!, "SIGINT");
    await exited;
  }
}, 30_000);

test("npm run demo, then npm run demo:burst: the trend arrives verified at the sandbox inbox, in n8n and in Slack", async () => {
  const env = {
    ...process.env, PORT: String(await freePort()), SANDBOX_BASE_PORT: String(await freePortRange(17)), QUEUE_PREFIX: `demo${process.pid}`,
    PUBLIC_BASE_URL: "", DEMO_LOG_LEVEL: "warn",
  };
  env.PUBLIC_BASE_URL = `http://localhost:${env.PORT}`;
  fs.rmSync(path.join(root, ".demo.json"), { force: true });
  // `npm run demo` keeps running: read its output until it says it is ready.
  demo = spawn(npm, ["run", "demo"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  demo.stdout!.on("data", (d) => (out += d));
  demo.stderr!.on("data", (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const t = setInterval(() => { if (/\[demo\] now, in another terminal: npm run demo:burst/.test(out)) { clearInterval(t); resolve(); } }, 200);
    demo!.once("exit", (code) => { clearInterval(t); reject(new Error(`npm run demo exited (${code}):\n${out}`)); });
  });
  expect(out).toMatch(/\[demo\] ready in \d+\.\d s \(first-run steps/);
  expect(out).toMatch(/connected: a webhook to the sandbox inbox, n8n workflow "Trend alert/);

  const burst = spawnSync(npm, ["run", "demo:burst"], { cwd: root, env, encoding: "utf8", timeout: 9 * 60_000 });
  const said = `${burst.stdout}${burst.stderr}`;
  expect({ status: burst.status, said }).toMatchObject({ status: 0 });
  expect(said).toMatch(/webhook trend\.detected received at the sandbox inbox, signature verified/);
  expect(said).toMatch(/n8n workflow push received \(trend-alert, event trend_lifecycle\)/);
  expect(said).toMatch(/Slack card posted in #trend-alerts: .*waterproof trail shoes/);

  // The page a newcomer opens shows the same three.
  const base = Number(env.SANDBOX_BASE_PORT);
  const page = await (await fetch(`http://127.0.0.1:${base + 16}/`)).text();
  expect(page).toMatch(/<td>trend\.detected<\/td><td>waterproof trail shoes \w+<\/td><td>verified<\/td>/);
  expect(page).toMatch(/n8n workflow pushes \(1\)/);
  expect(page).toMatch(/Slack messages \(1\)/);
}, 12 * 60_000);
