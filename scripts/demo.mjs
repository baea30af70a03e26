// `npm run demo`: your first trend, on your machine. Every first-run step of `npm start`, then the sandbox's
// stand-ins, the gateway and the workers pointed at them (nothing written to .env), and a demo account wired to the
// sandbox: a webhook subscription to the sandbox's receiver, n8n, and Slack. `npm run demo:burst` then sends a burst.
import { APP_NODE_FLAGS, firstRun, root, run } from "./lib.mjs";

const started = Date.now();
await firstRun();
run(process.execPath, ["--import", "tsx", "scripts/demo-stack.ts"], {
  env: { ...process.env, DEMO_SETUP_MS: String(Date.now() - started), DEMO_APP_NODE_FLAGS: JSON.stringify(APP_NODE_FLAGS), DEMO_ROOT: root },
});
