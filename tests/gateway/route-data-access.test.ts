import fs from "node:fs";
import path from "node:path";

// Route handlers reach the database only through the named query functions of packages/db (validate, call, shape
// the reply): a Prisma model call, a raw query or a transaction of their own in apps/gateway/src/routes fails here.
// Receivers are matched (deps.db, db, tx), so hash updates (crypto's `.update(`) are not taken for Prisma calls.

const root = path.resolve(import.meta.dirname, "../..");
const ROUTES = path.join(root, "apps/gateway/src/routes");

const OPS = "findMany|findFirst|findFirstOrThrow|findUnique|findUniqueOrThrow|create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|delete|deleteMany|upsert|count|aggregate|groupBy";
const MODEL_CALL = new RegExp(String.raw`\b(?:deps\s*\.\s*db|db|tx)\s*\.\s*[a-z]\w*\s*\.\s*(?:${OPS})\s*\(`, "g");
const RAW = /\$(?:queryRaw|queryRawUnsafe|executeRaw|executeRawUnsafe|transaction)\b|\$pool\s*\.\s*query\b/g;

/** Each offending call as `file:line: text`. */
function dataAccessIn(file: string, source: string): string[] {
  const found: string[] = [];
  for (const re of [MODEL_CALL, RAW]) {
    for (const m of source.matchAll(re)) {
      const line = source.slice(0, m.index).split("\n").length;
      found.push(`${file}:${line}: ${m[0].replace(/\s+/g, "")}`);
    }
  }
  return found;
}

const routeFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? routeFiles(p) : e.name.endsWith(".ts") ? [p] : [];
  });

test("no route file queries the database itself", () => {
  const files = routeFiles(ROUTES);
  expect(files.length).toBeGreaterThan(10);
  const found = files.flatMap((f) => dataAccessIn(path.relative(root, f), fs.readFileSync(f, "utf8")));
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

test("no route file queues outbox messages itself: a handler returns what its transaction added and the router queues it after the commit", () => {
  const found = routeFiles(ROUTES).flatMap((f) => {
    const source = fs.readFileSync(f, "utf8");
    return /\bdispatchOutbox\b|\bqueueOutboxAttempt\b/.test(source) ? [path.relative(root, f)] : [];
  });
  expect(found).toEqual([]);
});
