// Ads report export benchmark, in one run on this machine, at each size (BENCH_REPORT_ROWS, default
// 100,000 and 1,000,000 rows):
// (a) whole path: POST /api/integrations/ads/reporting/exports?mode=job to a real gateway process; a real worker
//     process (report-exports only) pulls the report from the local Google Ads API (generated stats, 10,000 rows per
//     page, as Google pages), writes CSV chunks into Postgres; the export is polled until ready and downloaded from
//     the gateway (every byte read). Timed from the POST to the last byte. Peak RSS (VmHWM) of the worker and the
//     gateway processes, each started fresh for the size.
// (b) bare: the same provider pages, read with the same Google reporting client in this process and piped through
//     csv-stringify alone into a sink that drops the bytes.
// Targets: peak RSS under 200 MB at every size; (a) rows/s at least 50 % of (b). The two processes run as in
// production: the bundles (dist/, `npm run build`) with APP_NODE_FLAGS (bench/lib.ts). BENCH_CHILD_NODE_OPTIONS
// passes further Node options to them (NODE_OPTIONS, e.g. --max-old-space-size=160).
import http from "node:http";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";
import { loadConfig } from "@trendgate/config";
import { googleAds } from "@trendgate/connector-ads";
import { SecretBox } from "@trendgate/crypto";
import { createAccount, createApiKey, createDb, saveAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../packages/connections/src/credentials.ts";
import { startGoogleAdsServer } from "../tests/peers/google-ads-server.ts";
import { fmt, freePort, peakRssMb, startApp, startGateway, stopServer } from "./lib.ts";

const SIZES = (process.env.BENCH_REPORT_ROWS ?? "100000,1000000").split(",").map(Number);
const DAYS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchReports() {
  console.log("\n== ads report export ==");
  const google = await startGoogleAdsServer({ pageSize: 10_000 });
  const prefix = `benchrp${Date.now()}`;
  const env = { GOOGLE_ADS_CLIENT_ID: "bench", GOOGLE_ADS_CLIENT_SECRET: "bench", GOOGLE_ADS_API_URL: google.url, OUTBOUND_ALLOWLIST: "127.0.0.1", QUEUE_PREFIX: prefix, LOG_LEVEL: "warn", ...(process.env.BENCH_CHILD_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_CHILD_NODE_OPTIONS } : {}) };
  const config = loadConfig({ ...process.env, ...env });
  const db = createDb(config.DATABASE_URL);
  const secrets = new SecretBox(config.ENCRYPTION_KEY);
  try {
    for (const rows of SIZES) {
      const customer = google.addCustomer();
      const token = `bench-${customer.id}`;
      google.addToken(token, { customers: [customer.id] });
      const adGroups = Math.ceil(rows / DAYS);
      const gen = google.generateStats({ customerId: customer.id, adGroups, days: DAYS, from: "2026-06-01" });
      const request = { providers: ["google_ads"], from: gen.from, to: gen.to, granularity: "day", level: "ad_group" };
      const account = await createAccount(db, "bench reports");
      const { key } = await createApiKey(db, account.id, "bench");
      await db.$transaction(async (tx) => {
        const c = await saveAuthorizedConnection(tx, {
          accountId: account.id, provider: "google_ads", kind: "ads", credentialsSealed: sealTokens(secrets, { accessToken: token, tokenType: "bearer" }),
          tokenExpiresAt: new Date(Date.now() + 24 * 3600_000), scopes: [], externalAccount: {},
        });
        await tx.connection.update({ where: { id: c.id }, data: { selection: { trend_category: "tech", strict_safety: true, account_id: customer.id } } });
      });

      // (b) bare first: the same pages through csv-stringify alone.
      const client = googleAds.reporting!.client({ baseUrl: google.url, accessToken: token, env: {} });
      let bareRows = 0;
      const b0 = performance.now();
      await pipeline(
        Readable.from((async function* () { for await (const page of client.pages({ accountId: customer.id, level: "ad_group", from: gen.from, to: gen.to, granularity: "day" }, {})) for (const r of page) { bareRows++; yield r; } })()),
        stringify({ header: true }),
        new Writable({ write(_c, _e, done) { done(); } }),
      );
      const bareRate = bareRows / ((performance.now() - b0) / 1000);

      // (a) the whole path, in fresh processes.
      const port = await freePort();
      const gateway = await startGateway(env, port);
      const worker = startApp("worker", { ...env, WORKER_QUEUES: "report-exports" });
      await sleep(4000); // the worker's start (it has no health port)
      const idle = { worker: peakRssMb(worker.pid!), gateway: peakRssMb(gateway.pid!) };
      const base = `http://127.0.0.1:${port}/api/integrations/ads/reporting`;
      const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const t0 = performance.now();
      const created = await fetch(`${base}/exports?mode=job`, { method: "POST", headers: auth, body: JSON.stringify(request) });
      if (created.status !== 202) throw new Error(`export: ${created.status} ${await created.text()}`);
      const { id } = await created.json() as { id: string };
      let status = "queued";
      let written = 0;
      while (status === "queued" || status === "running") {
        await sleep(200);
        const s = await (await fetch(`${base}/exports/${id}`, { headers: auth })).json() as { status: string; rows_written: number; error: string | null };
        status = s.status;
        written = s.rows_written;
        if (status === "failed") throw new Error(`export failed: ${s.error}`);
      }
      const ready = performance.now();
      const dl = await fetch(`${base}/exports/${id}/download`, { headers: auth });
      let lines = 0;
      let bytes = 0;
      for await (const chunk of dl.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        for (const c of chunk) if (c === 10) lines++;
      }
      const t1 = performance.now();
      const rate = (lines - 1) / ((t1 - t0) / 1000);
      const workerPeak = peakRssMb(worker.pid!);
      const gatewayPeak = peakRssMb(gateway.pid!);
      console.log(`rows ${fmt(rows)} (generated ${fmt(gen.expected({ level: "ad_group", granularity: "day" }).rows)}, written ${fmt(written)}, downloaded ${fmt(lines - 1)}, ${fmt(bytes / 1e6, 1)} MB)`);
      console.log(`  whole path : ${fmt(rate)} rows/s (export ${fmt((ready - t0) / 1000, 1)} s + download ${fmt((t1 - ready) / 1000, 1)} s); peak RSS worker ${fmt(workerPeak)} MB, gateway ${fmt(gatewayPeak)} MB (target < 200; idle after start ${fmt(idle.worker)} / ${fmt(idle.gateway)} MB)`);
      console.log(`  bare       : ${fmt(bareRate)} rows/s (same pages -> csv-stringify -> nowhere)`);
      console.log(`  ratio      : ${fmt((rate / bareRate) * 100)} % (target >= 50 %)`);
      await db.reportExport.delete({ where: { id } });
      const exited = new Promise((r) => worker.once("exit", r));
      worker.kill("SIGTERM");
      await exited;
      await stopServer(gateway);
    }
  } finally {
    await db.$disconnect();
    await google.close();
  }
}
