// `npm run demo:burst` (with `npm run demo` running): three days of a steady topic and a burst now, sent through
// POST /api/signals as your own feed would, then waits until the sandbox has received the trend three ways: a
// webhook delivery whose signature it verified, an n8n workflow push, and a Slack card. Exits 0 when all three
// arrived, 1 if they did not within 8 minutes.
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const say = (msg) => process.stdout.write(`[demo] ${msg}\n`);
const file = path.join(root, ".demo.json");
if (!fs.existsSync(file)) { process.stderr.write("[demo] no .demo.json: start `npm run demo` first (in another terminal) and wait for \"ready\"\n"); process.exit(1); }
const demo = JSON.parse(fs.readFileSync(file, "utf8"));

// A topic of its own each run, so every run is a new trend.
const topic = `waterproof trail shoes ${Math.random().toString(36).slice(2, 6)}`;
const now = Date.now();
const signals = [];
for (let h = 72; h >= 1; h--) {
  signals.push({ source: "demo", topic, category: "sports/running", id: `base-${h}`, count: 20 + (h % 5), observed_at: new Date(now - h * 3600e3).toISOString() });
}
signals.push({ source: "demo", topic, category: "sports/running", id: "burst", count: 400, sentiment: 0.4, observed_at: new Date(now - 60e3).toISOString() });

const t0 = Date.now();
const res = await fetch(`${demo.api}/api/signals`, {
  method: "POST", headers: { authorization: `Bearer ${demo.key}`, "content-type": "application/json" }, body: JSON.stringify({ signals }),
}).catch((e) => { process.stderr.write(`[demo] the gateway at ${demo.api} does not answer (${e.cause?.code ?? e.message}): is \`npm run demo\` running?\n`); process.exit(1); });
if (res.status !== 202 && res.status !== 200) { process.stderr.write(`[demo] POST /api/signals: ${res.status} ${await res.text()}\n`); process.exit(1); }
say(`sent ${signals.length} signals of "${topic}": 72 hours at ~22 an hour, then 400 in the last minute`);

// The hour in progress is judged once 5 minutes of it have passed (earlier, a handful of mentions would decide).
const minute = new Date().getUTCMinutes();
say(minute < 5
  ? `this hour is ${minute} min old: detection judges it from minute 5, so expect the alert in about ${6 - minute} min`
  : "detection runs every minute: expect the alert within about a minute");

const seen = {};
const deadline = Date.now() + 8 * 60_000;
for (;;) {
  const r = await (await fetch(`${demo.inbox}/received.json`)).json();
  const ofTopic = (b) => b && typeof b === "object" && b.trend_name === topic;
  const found = {
    webhook: r.webhooks.find((d) => d.verified && d.event_type === "trend.detected" && ofTopic(d.body)),
    n8n: r.n8n_pushes.find((p) => ofTopic(p.body?.data)),
    slack: r.slack_messages.find((m) => m.text.includes(topic)),
  };
  for (const [what, hit] of Object.entries(found)) {
    if (hit && !seen[what]) {
      seen[what] = true;
      const s = ((Date.now() - t0) / 1000).toFixed(0);
      if (what === "webhook") say(`${s} s: webhook trend.detected received at the sandbox inbox, signature verified (webhook-id ${hit.webhook_id})`);
      if (what === "n8n") say(`${s} s: n8n workflow push received (${hit.path}, event ${hit.event})`);
      if (what === "slack") say(`${s} s: Slack card posted in #trend-alerts: ${hit.text.slice(0, 100)}`);
    }
  }
  if (seen.webhook && seen.n8n && seen.slack) break;
  if (Date.now() > deadline) {
    process.stderr.write(`[demo] not all arrived within 8 minutes (webhook ${!!seen.webhook}, n8n ${!!seen.n8n}, Slack ${!!seen.slack}); the apps' log: .demo.log\n`);
    process.exit(1);
  }
  await new Promise((r) => setTimeout(r, 2000));
}
say(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s. See it all at ${demo.inbox}/ and GET ${demo.api}/api/trends`);
