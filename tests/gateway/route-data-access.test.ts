import fs from "node:fs";
import path from "node:path";
import { matchesIn, matchesInRoutes, REPO_ROOT, ROUTES_DIR, tsFilesUnder } from "../helpers/source-scan.ts";

// Route handlers reach the database only through the named query functions of packages/db (validate, call, shape
// the reply): a Prisma model call, a raw query or a transaction of their own in apps/gateway/src/routes fails here.
// Receivers are matched (deps.db, db, tx), so hash updates (crypto's `.update(`) are not taken for Prisma calls.

const OPS = "findMany|findFirst|findFirstOrThrow|findUnique|findUniqueOrThrow|create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|delete|deleteMany|upsert|count|aggregate|groupBy";
const MODEL_CALL = new RegExp(String.raw`\b(?:deps\s*\.\s*db|db|tx)\s*\.\s*[a-z]\w*\s*\.\s*(?:${OPS})\s*\(`, "g");
const RAW = /\$(?:queryRaw|queryRawUnsafe|executeRaw|executeRawUnsafe|transaction)\b|\$pool\s*\.\s*query\b/g;

/** Each offending call as `file:line: text`. */
const dataAccessIn = (file: string, source: string) => matchesIn(file, source, [MODEL_CALL, RAW]);

test("no route file queries the database itself", () => {
  const { files, found } = matchesInRoutes([MODEL_CALL, RAW]);
  expect(files).toBeGreaterThan(10);
  expect(found).toEqual([]);
});

test("no gateway service queries the database itself either: services are the routes' helpers, under their rule", () => {
  const files = tsFilesUnder(path.join(REPO_ROOT, "apps/gateway/src/services"));
  expect(files.length).toBeGreaterThan(3);
  const found = files.flatMap((f) => dataAccessIn(path.relative(REPO_ROOT, f), fs.readFileSync(f, "utf8")));
  expect(found).toEqual([]);
});

test("the check finds what it is meant to, and not hash updates", () => {
  const src = [
    "const a = await deps.db.trend.findMany({ where });",
    "await tx.webhookDelivery",
    "  .updateMany({ where });",
    "const r = await deps.db.$transaction(async (tx) => work(tx));",
    "await deps.db.$queryRaw`SELECT 1`;",
    "await deps.db.$pool.query('SELECT 1');",
    "const h = crypto.createHash('sha256').update(key).digest('hex');",
    "const rows = await listTrends(deps.db, filter, sort, null, 10);",
  ].join("\n");
  expect(dataAccessIn("x.ts", src).map((s) => s.split(": ")[0])).toEqual(["x.ts:1", "x.ts:2", "x.ts:4", "x.ts:5", "x.ts:6"]);
});

test("no route file queues outbox messages or webhook deliveries itself: a handler returns what its transaction added and the router queues it after the commit", () => {
  const found = tsFilesUnder(ROUTES_DIR).flatMap((f) => {
    const source = fs.readFileSync(f, "utf8");
    return /\bdispatchOutbox\b|\bqueueOutboxAttempt\b|\benqueueDeliver(y|ies)\b|\brequeueDeliveries\b|\bqueueDeliveries\b/.test(source) ? [path.relative(REPO_ROOT, f)] : [];
  });
  expect(found).toEqual([]);
});
