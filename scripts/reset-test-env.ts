// Resets the TEST database (drop, then `prisma migrate deploy` recreates it) and flushes the test Redis db.
import { execFileSync } from "node:child_process";
import { Redis } from "ioredis";
import pg from "pg";

const url = new URL(process.env.DATABASE_URL!);
const db = decodeURIComponent(url.pathname.slice(1));
if (!/test/i.test(db)) throw new Error(`refusing to reset "${db}": not a test database`);
url.pathname = "/postgres";
const admin = new pg.Client({ connectionString: url.href });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS "${db.replace(/"/g, '""')}" WITH (FORCE)`);
await admin.end();
execFileSync("node_modules/.bin/prisma", ["migrate", "deploy"], { stdio: "pipe" });

const redis = new Redis(process.env.REDIS_URL!);
await redis.flushdb();
redis.disconnect();
