// npm run sandbox [-- --write [FILE]]
// Starts every vendor stand-in (tests/peers) on fixed loopback ports from SANDBOX_BASE_PORT (environment or .env;
// default 4100), seeded with one small account each, and prints the variables that point the service at them.
// --write also writes them to FILE (default .env.sandbox). Ctrl-C stops everything. docs/connectors.md "Sandbox" walks one
// connector's browser flow.
import fs from "node:fs";
import { parseArgs, parseEnv } from "node:util";
import { loadConfig } from "@trendgate/config";
import { SANDBOX_BASE_PORT, sandboxEnvText, startSandbox } from "../tests/peers/sandbox.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { write: { type: "boolean", default: false } } });
const fail = (msg: string): never => { process.stderr.write(msg + "\n"); process.exit(64); };

// The service's settings, read as it reads them: the environment wins over .env.
const serviceEnv = { ...(fs.existsSync(".env") ? parseEnv(fs.readFileSync(".env", "utf8")) : {}), ...process.env };
const rawBase = serviceEnv.SANDBOX_BASE_PORT || String(SANDBOX_BASE_PORT);
const basePort = /^\d+$/.test(rawBase) && Number(rawBase) >= 1024 && Number(rawBase) <= 65_000 ? Number(rawBase) : fail(`SANDBOX_BASE_PORT must be a port from 1024 to 65000; got "${rawBase}"`);

// The redirect URI registered at the stand-ins that check it exactly (Google's): the one the service will send.
let redirectUri = "http://localhost:3000/api/integrations/oauth/callback";
try {
  const c = loadConfig({ ADMIN_TOKEN: "x".repeat(24), ENCRYPTION_KEY: Buffer.alloc(32).toString("base64"), ...serviceEnv });
  redirectUri = c.OAUTH_REDIRECT_URL ?? new URL("/api/integrations/oauth/callback", c.PUBLIC_BASE_URL).toString();
} catch { /* an invalid .env is the service's to report; the default redirect URI stands */ }

let sandbox;
try {
  sandbox = await startSandbox({ basePort, redirectUris: [redirectUri] });
} catch (e) {
  const err = e as NodeJS.ErrnoException;
  fail(err.code === "EADDRINUSE" ? `a sandbox port is taken (${err.message}); stop what uses it or set SANDBOX_BASE_PORT` : String(err.stack ?? err));
}
const sb = sandbox!;

const out = process.stdout;
out.write(`Trendgate sandbox: ${sb.services.length} stand-ins on 127.0.0.1 (SANDBOX_BASE_PORT=${sb.basePort})\n\n`);
for (const s of sb.services) out.write(`  ${String(s.port).padEnd(6)} ${s.service.padEnd(14)} ${s.what}\n`);
out.write(`\nOAuth redirect URI registered: ${redirectUri}\n`);
out.write("\n# ---- paste into .env (or run with --write), then restart the gateway and workers ----\n");
out.write(sandboxEnvText(sb));
out.write("\nConnectors that take credentials instead of a browser flow:\n");
for (const c of sb.credentials) out.write(`  ${c.connector}: ${c.how}\n`);
if (values.write) {
  const file = positionals[0] ?? ".env.sandbox";
  fs.writeFileSync(file, sandboxEnvText(sb));
  out.write(`\nWrote ${file}.\n`);
}
out.write("\nCtrl-C stops the sandbox.\n");

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void sb.close().then(() => process.exit(0), () => process.exit(1));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

