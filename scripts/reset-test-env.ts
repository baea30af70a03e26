// Resets the test databases and the test Redis db. The migrated database (DATABASE_URL, e.g. trendgate_test) is the
// template; each jest worker gets its own copy (trendgate_test_w1, _w2, ...; see tests/helpers/setup-env.ts), so
// test files running at the same time never see each other's rows (outbox sweepers scan the whole database).
import { execFileSync } from "node:child_process";
import { createRedis, masters, whenReady } from "@trendgate/queues";
import pg from "pg";

export const JEST_DATABASES = 4; // >= jest maxWorkers
const url = new URL(process.env.DATABASE_URL!);
const db = decodeURIComponent(url.pathname.slice(1));
if (!/test/i.test(db)) throw new Error(`refusing to reset "${db}": not a test database`);
const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const workers = Array.from({ length: JEST_DATABASES }, (_, i) => `${db}_w${i + 1}`);

url.pathname = "/postgres";
const admin = new pg.Client({ connectionString: url.href });
await admin.connect();
for (const name of [...workers, db]) await admin.query(`DROP DATABASE IF EXISTS ${q(name)} WITH (FORCE)`);
execFileSync("node_modules/.bin/prisma", ["migrate", "deploy"], { stdio: "pipe" });
for (const name of workers) await admin.query(`CREATE DATABASE ${q(name)} TEMPLATE ${q(db)}`);
await admin.end();

const redis = createRedis(process.env.REDIS_URL!, "worker"); // a cluster: every master
await whenReady(redis, 10_000);
for (const node of masters(redis)) await node.flushdb();
redis.disconnect();
