import net from "node:net";
import { spawn, type ChildProcess } from "node:child_process";
import { QUEUES } from "@trendgate/contracts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/config.ts";
import { freePort } from "../helpers/free-port.ts";

describe("when Redis goes down", () => {
  let redis: ChildProcess;
  let gw: TestGateway;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    gw = await waitFor(async () => { try { return await startGateway({ REDIS_URL: `redis://127.0.0.1:${port}` }); } catch { return null; } });
    await waitFor(async () => (await gw.deps.redis.ping().catch(() => null)) === "PONG");
  });
  afterAll(async () => { redis.kill("SIGKILL"); await gw.close(); });

  test("/status answers 200, then 503 with Retry-After once Redis is stopped; writes answer 503 and leave nothing behind", async () => {
    const a = await gw.account();
    const up = await gw.http.get("/status").set("Authorization", `Bearer ${gw.deps.config.ADMIN_TOKEN}`); // queue depths: operators only
    expect(up.status).toBe(200);
    expect(up.body.checks.redis.status).toBe("up");
    expect(up.body.queues[QUEUES.signals]).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0 });

    redis.kill("SIGTERM");
    await waitFor(async () => (await gw.deps.redis.ping().catch(() => "down")) === "down");

    const down = await gw.http.get("/status");
    expect(down.status).toBe(503);
    expect(down.headers["retry-after"]).toBe("5");
    expect(down.body.checks.redis.status).toBe("down");
    expect(down.body.checks.postgres.status).toBe("up");

    const write = await gw.http.post("/api/signals").set(a.auth).set("Idempotency-Key", "during-outage").send({ signals: [signal({ id: "outage-1" })] });
    expect(write.status).toBe(503);
    expect(write.body.code).toBe("service_unavailable");
    expect(Number(write.headers["retry-after"])).toBeGreaterThan(0);
    expect(await gw.deps.db.signal.count({ where: { accountId: a.accountId } })).toBe(0);
  });
});

describe("when Postgres is unreachable", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    const port = await freePort(); // nothing listens there
    gw = await startGateway({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/trendgate_test` });
  });
  afterAll(async () => { await gw.close(); });

  test("/status and authenticated requests answer 503 with Retry-After", async () => {
    const status = await gw.http.get("/status");
    expect(status.status).toBe(503);
    expect(status.body.checks.postgres.status).toBe("down");
    expect(status.body.checks.redis.status).toBe("up");
    const res = await gw.http.get("/api/keys").set("Authorization", `Bearer tg_aaaaaaaaaaaa_${"A".repeat(43)}`);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("service_unavailable");
    expect(res.headers["retry-after"]).toBe("5");
  });
});

describe("while Postgres is starting up", () => {
  // What a starting (or recovering) Postgres answers every new connection: FATAL 57P03, then it closes. A socket that
  // speaks that much of the wire protocol: "N" to an SSL request, the ErrorResponse to the startup message.
  let server: net.Server;
  let gw: TestGateway;
  beforeAll(async () => {
    server = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.on("data", (chunk) => {
        if (chunk.length === 8 && chunk.readInt32BE(4) === 80877103) return void socket.write("N"); // SSLRequest
        const field = (type: string, text: string) => Buffer.concat([Buffer.from(type), Buffer.from(text), Buffer.from([0])]);
        const body = Buffer.concat([field("S", "FATAL"), field("V", "FATAL"), field("C", "57P03"), field("M", "the database system is starting up"), Buffer.from([0])]);
        const head = Buffer.alloc(5);
        head.write("E");
        head.writeInt32BE(body.length + 4, 1);
        socket.end(Buffer.concat([head, body]));
      });
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    gw = await startGateway({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/trendgate_test` });
  });
  afterAll(async () => { await gw.close(); await new Promise((r) => server.close(r)); });

  test("authenticated requests answer 503 with Retry-After, not 500", async () => {
    const res = await gw.http.get("/api/keys").set("Authorization", `Bearer tg_aaaaaaaaaaaa_${"A".repeat(43)}`);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("service_unavailable");
    expect(res.headers["retry-after"]).toBe("5");
  });
});
