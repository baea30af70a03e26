// Bench receiver: answers 204 to every POST, counts them, and records event-to-receipt latency from the
// payload's `timestamp` (the bench sets it to the publish time). GET /stats, POST /reset. GET /timeline?ms=250: the
// worst latency of the events published in each `ms` window, to tell periodic stalls from a steady backlog.
// Fault paths: POST /fault/<pct>/<anything> answers 500 to about <pct> % of requests (at random), 204 otherwise;
// /stats reports them as `faultRequests` and `faultOk`.
import http from "node:http";

let count = 0;
let faultRequests = 0;
let faultOk = 0;
let latencies: number[] = []; // in receipt order, to tell a constant delay from a growing backlog
let published: number[] = []; // publish time of each latency sample
const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    const sorted = [...latencies].sort((a, b) => a - b);
    const q = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : null);
    res.end(JSON.stringify({ count, faultRequests, faultOk, latencies: sorted.length, min: sorted[0] ?? null, p50: q(0.5), p99: q(0.99), max: sorted.at(-1) ?? null,
      first: latencies.slice(0, 5), last: latencies.slice(-5) }));
    return;
  }
  if (req.method === "GET" && req.url?.startsWith("/timeline")) {
    const ms = Number(new URL(req.url, "http://x").searchParams.get("ms") ?? 250);
    const t0 = published.reduce((a, b) => Math.min(a, b), Infinity);
    const worst: number[] = [];
    published.forEach((t, i) => { const b = Math.floor((t - t0) / ms); worst[b] = Math.max(worst[b] ?? 0, latencies[i]); });
    res.end(JSON.stringify({ ms, worst: Array.from(worst, (w) => w ?? null) }));
    return;
  }
  if (req.url === "/reset") { count = 0; faultRequests = 0; faultOk = 0; latencies = []; published = []; res.end("{}"); return; }
  const chunks: Buffer[] = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    count++;
    if (req.url === "/latency") {
      const at = Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp);
      const l = Date.now() - at;
      latencies.push(l);
      published.push(at);
    }
    const fault = /^\/fault\/(\d+)\//.exec(req.url ?? "");
    if (fault) {
      faultRequests++;
      if (Math.random() * 100 < Number(fault[1])) { res.statusCode = 500; res.end("injected failure"); return; }
      faultOk++;
    }
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.send?.("ready"));
