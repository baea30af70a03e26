// The second half of `npm run demo` (scripts/demo.mjs did the first-run steps): the sandbox's stand-ins, the
// gateway and the workers (the bundles, as `npm start` runs them) pointed at them through their environment, and a
// demo account wired to the sandbox through the public API: a webhook subscription to the sandbox inbox (which
// verifies signatures), the n8n stand-in's "Trend alert" workflow, and Slack's #trend-alerts (its consent page
// approved as a browser would). Writes .demo.json for `npm run demo:burst`. Ctrl-C stops everything.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { loadConfig, oauthRedirectUrl } from "@trendgate/config";
import { createAccount, createApiKey, createDb } from "@trendgate/db";
import { browse } from "../tests/peers/consent-page.ts";
import { SANDBOX_BASE_PORT, startSandbox } from "../tests/peers/sandbox.ts";

const root = process.env.DEMO_ROOT ?? process.cwd();
const flags = JSON.parse(process.env.DEMO_APP_NODE_FLAGS ?? "[]") as string[];
const say = (msg: string) => process.stdout.write(`[demo] ${msg}\n`);
const fail = (msg: string): never => { process.stderr.write(`[demo] ${msg}\n`); process.exit(1); };
const t0 = Date.now();

const config = loadConfig(process.env);
const port = config.PORT;
const api = `http://127.0.0.1:${port}`;
const basePort = Number(process.env.SANDBOX_BASE_PORT || SANDBOX_BASE_PORT);
const sandbox = await startSandbox({ basePort, redirectUris: [oauthRedirectUrl(config)] }).catch((e: NodeJS.ErrnoException) =>
  fail(e.code === "EADDRINUSE" ? `a sandbox port is taken (${e.message}): stop what uses it (another npm run demo or sandbox?) or set SANDBOX_BASE_PORT` : String(e.stack ?? e)));
const { inbox } = sandbox;

// The apps, with the sandbox's variables over yours (only for these processes: .env is not touched).
const logFile = path.join(root, ".demo.log");
const log = fs.openSync(logFile, "w");
const allow = [process.env.OUTBOUND_ALLOWLIST, sandbox.env.OUTBOUND_ALLOWLIST].filter(Boolean).join(",");
const env = { ...process.env, ...sandbox.env, OUTBOUND_ALLOWLIST: allow, LOG_LEVEL: process.env.DEMO_LOG_LEVEL ?? "info" };
const children: ChildProcess[] = ["gateway", "worker"].map((app) =>
  spawn(process.execPath, [...flags, path.join(root, `dist/${app}/main.mjs`)], { cwd: root, env, stdio: ["ignore", log, log] }));
let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null)));
  await sandbox.close().catch(() => {});
  process.exit(code);
}
for (const c of children) c.once("exit", (code) => { if (!stopping) { process.stderr.write(`[demo] an app exited (${code}); its log: ${logFile}\n`); void stop(1); } });
for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, () => void stop(0));

async function call(method: string, p: string, key: string | null, body?: unknown) {
  const res = await fetch(`${api}${p}`, {
    method, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => null);
  if (!res.ok) fail(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json as Record<string, any>;
}

try {
  for (let i = 0; ; i++) {
    const up = await fetch(`${api}/status`).then((r) => r.ok, () => false);
    if (up) break;
    if (i > 300) fail(`the gateway did not answer on ${api} within 60 s; its log: ${logFile}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  // A demo account and its key (what `npm run api-key -- create` does).
  const db = createDb(config.DATABASE_URL);
  const account = await createAccount(db, "Demo (sandbox)");
  const { key } = await createApiKey(db, account.id, "npm run demo");
  await db.$disconnect();

  // 1. Every new trend, signed, to the sandbox inbox, which verifies the signature with the secret given here.
  const hook = await call("POST", "/api/integrations/webhooks", key, {
    url: inbox.hookUrl("demo"), description: "sandbox inbox", trigger_type: "trend_detected", threshold_value: 0, delivery_mode: "instant_stream", cooldown_seconds: 0,
  });
  inbox.setSecret("demo", hook.secret);

  // 2. n8n: the API key, then the workflow that takes trend pushes.
  await call("POST", "/api/integrations/workflow/connect", key, { api_key: "n8n_api_sandbox_0123456789abcdef", api_base_url: sandbox.env.N8N_API_URL, include_metadata: true });
  const workflows = (await call("GET", "/api/integrations/workflow/workflows?limit=20", key)).data as { id: string; name: string; can_receive_pushes: boolean }[];
  const wf = workflows.find((w) => w.can_receive_pushes && w.name.startsWith("Trend alert")) ?? fail("the n8n stand-in has no Trend alert workflow");
  await call("PUT", "/api/integrations/workflow/selection", key, { workflow_id: wf.id, workflow_name: wf.name, default_event: "trend_lifecycle", api_base_url: sandbox.env.N8N_API_URL });

  // 3. Slack: the browser flow (its consent page approved), the alerts channel, and cards from low severity up.
  const { authorization_url } = await call("GET", "/api/integrations/chat/auth", key);
  const back = await browse(authorization_url);
  const callback = await fetch(new URL(back.pathname + back.search, api));
  if (!callback.ok) fail(`Slack's OAuth callback: ${callback.status} ${await callback.text()}`);
  await call("POST", "/api/integrations/chat/save-channel", key, { channel_id: "C0TRENDS001" });
  await call("PUT", "/api/integrations/chat/settings", key, { min_severity: "low" });

  const consoleUrl = (await call("POST", "/api/console/sessions", key, { label: "demo" })).url as string;
  fs.writeFileSync(path.join(root, ".demo.json"), JSON.stringify({ api, key, inbox: inbox.url, account_id: account.id }, null, 2) + "\n");

  const setup = Number(process.env.DEMO_SETUP_MS ?? 0);
  say(`ready in ${((setup + Date.now() - t0) / 1000).toFixed(1)} s (first-run steps ${(setup / 1000).toFixed(1)} s, sandbox and apps ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  say(`gateway ${api}  (API docs ${api}/docs; the apps' log: ${logFile})`);
  say(`demo account ${account.id}, API key (also in .demo.json): ${key}`);
  say(`connected: a webhook to the sandbox inbox, n8n workflow "${wf.name}", Slack #trend-alerts`);
  say(`what the sandbox receives: ${inbox.url}/`);
  say(`the console: ${consoleUrl}`);
  say("now, in another terminal: npm run demo:burst   (Ctrl-C here stops the demo)");
} catch (e) {
  process.stderr.write(`[demo] ${String((e as Error).stack ?? e)}\n`);
  await stop(1);
}
