import { createDb, type Db } from "@trendgate/db";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { scratchDb, type ScratchDb } from "../helpers/scratch-db.ts";
import { seedTrendRow } from "../helpers/trend-row.ts";

// DATABASE_READ_URL: the read-only routes that tolerate replication lag (trend lists and details, recommendations,
// backtests) read the replica; everything else, authentication included, uses the primary. The replica here is a
// second database with rows of its own, so where each answer came from shows.

let replica: ScratchDb;
let replicaDb: Db;
let gw: TestGateway;
beforeAll(async () => {
  replica = await scratchDb("replica");
  await replica.migrate();
  replicaDb = createDb(replica.url);
  gw = await startGateway({ DATABASE_READ_URL: replica.url });
});
afterAll(async () => {
  await gw?.close();
  await replicaDb?.$disconnect();
  await replica?.drop();
});

test("trends and recommendations come from the read replica; keys and writes stay on the primary", async () => {
  const a = await gw.account(); // on the primary: authentication reads it there
  await replicaDb.account.create({ data: { id: a.accountId, name: "replicated", plan: "free" } });
  const onReplica = await seedTrendRow(replicaDb, a.accountId, "seen on the replica");
  await seedTrendRow(gw.deps.db, a.accountId, "primary only");

  const list = await gw.http.get("/api/trends").set(a.auth);
  expect(list.status).toBe(200);
  expect(list.body.data.map((t: { name: string }) => t.name)).toEqual(["seen on the replica"]);
  const one = await gw.http.get(`/api/trends/${onReplica.id}`).set(a.auth);
  expect([one.status, one.body.name]).toEqual([200, "seen on the replica"]);
  const recs = await gw.http.get("/api/intelligence/recommendations").set(a.auth);
  expect(recs.status).toBe(200);
  expect(JSON.stringify(recs.body.data)).not.toContain("primary only");

  // A write goes to the primary (and a replica would receive it by replication, not from us).
  const mute = await gw.http.post("/api/mutes").set(a.auth).send({ topic: "AI agents", duration_minutes: 60 });
  expect(mute.status).toBe(201);
  expect(await gw.deps.db.mute.count({ where: { accountId: a.accountId } })).toBe(1);
  expect(await replicaDb.mute.count({ where: { accountId: a.accountId } })).toBe(0);
});

test("without DATABASE_READ_URL every route reads the primary", async () => {
  const plain = await startGateway();
  try {
    expect(plain.deps.readDb).toBe(plain.deps.db);
    const a = await plain.account();
    await seedTrendRow(plain.deps.db, a.accountId, "on the primary");
    const list = await plain.http.get("/api/trends").set(a.auth);
    expect(list.body.data.map((t: { name: string }) => t.name)).toEqual(["on the primary"]);
  } finally {
    await plain.close();
  }
});
