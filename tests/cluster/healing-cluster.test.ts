import { Cluster, type ClusterNode } from "ioredis";
import { createRedis, parseRedisUrl } from "@trendgate/queues";
import { HealingCluster } from "../../packages/queues/src/healing-cluster.ts";
import { waitFor } from "../helpers/config.ts";
import { sleep } from "../helpers/faults-proc-kit.ts";

// A cluster client whose "close" goes unhandled: what BullMQ's back-to-back disconnect()/connect() of a worker's
// blocking client can leave behind after a master restart (ioredis decides what follows a close in a listener each
// connect() registers once; a close that finds it spent decides nothing). Here that listener is taken away by hand,
// which is the same state without the timing it takes to reach it.

const url = process.env.REDIS_URL!;
const clients: Cluster[] = [];
afterEach(() => { for (const c of clients.splice(0)) c.disconnect(); });

function open(Kind: new (nodes: ClusterNode[], options: object) => Cluster) {
  const target = parseRedisUrl(url);
  if (!target.cluster) throw new Error("the cluster suite sets REDIS_URL to a cluster");
  const c = new Kind(target.nodes, { clusterRetryStrategy: () => 100, redisOptions: target.options });
  c.on("error", () => {});
  clients.push(c);
  return c;
}

async function ready(c: Cluster) {
  await waitFor(async () => c.status === "ready", { timeoutMs: 10_000 });
  expect(await c.set("healing-cluster:k", "v")).toBe("OK");
}

/** Drops ioredis' own decision on the next "close" (reconnect, or end after a manual disconnect). */
function spendCloseHandler(c: Cluster) {
  for (const l of c.rawListeners("close") as Array<{ name: string; listener?: { name: string } }>)
    if ((l.listener ?? l).name === "bound handleCloseEvent") c.removeListener("close", l as never);
}

test("a cluster client left closed by an unhandled close reconnects by itself (a plain ioredis Cluster stays closed)", async () => {
  const plain = open(Cluster);
  const healing = open(HealingCluster);
  await Promise.all([ready(plain), ready(healing)]);
  for (const c of [plain, healing]) { spendCloseHandler(c); c.disconnect(true); } // a reconnecting disconnect

  await ready(healing); // within a few seconds, and usable
  await sleep(1500);
  expect(plain.status).toBe("close");
  expect(plain.nodes("all")).toHaveLength(0);
});

test("one closed on purpose reaches end, so whoever waits for the end (BullMQ's close) gets it", async () => {
  const plain = open(Cluster);
  const healing = open(HealingCluster);
  await Promise.all([ready(plain), ready(healing)]);
  const ended = new Promise<void>((resolve) => healing.once("end", () => resolve()));
  for (const c of [plain, healing]) { spendCloseHandler(c); c.disconnect(); }

  await ended;
  expect(healing.status).toBe("end");
  await sleep(1500);
  expect(plain.status).toBe("close"); // the "end" a plain client's waiter needs never comes
});

test("the fleet's cluster connections, and the duplicates BullMQ makes of them for blocking commands, are healing ones", () => {
  const conn = createRedis(url, "worker", { lazyConnect: true });
  expect(conn).toBeInstanceOf(HealingCluster);
  expect((conn as Cluster).duplicate()).toBeInstanceOf(HealingCluster);
  conn.disconnect();
});
