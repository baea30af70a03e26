import { Redis } from "ioredis";
import { Queue } from "bullmq";
const r = new Redis("redis://127.0.0.1:6379");
const q = new Queue("shamap", { connection: r }); await q.waitUntilReady(); await q.getJobCounts(); 
// load all bullmq scripts to map sha->name
const w = (await import("bullmq")).Worker; const wk = new w("shamap", async () => {}, { connection: new Redis({ maxRetriesPerRequest: null }), autorun: false }); await wk.waitUntilReady();
const client = r;
const map = {}; for (const [name, s] of Object.entries(client.scriptsSet ?? {})) map[s.sha] = name;
const log = await r.call("SLOWLOG", "GET", "200000");
const by = {}; let total = 0;
for (const e of log) { const us = e[2]; const args = e[3]; let k = String(args[0]).toLowerCase(); if (k === "evalsha") k = "script:" + (map[args[1]] ?? args[1].slice(0, 8)); (by[k] ??= { n: 0, us: 0 }); by[k].n++; by[k].us += us; total += us; }
console.log("total ms", (total/1000).toFixed(0));
Object.entries(by).sort((a, b) => b[1].us - a[1].us).slice(0, 15).forEach(([k, v]) => console.log(k.padEnd(40), v.n, (v.us/1000).toFixed(0), "ms", (v.us / v.n).toFixed(1), "us/call"));
await wk.close(); await q.close(); r.disconnect();
