import { spawnSync } from "node:child_process";
import path from "node:path";
import { freePort } from "../helpers/free-port.ts";

// `npm start`/`npm test` check Postgres and Redis first; the hint must name the address the URLs ask for.
const lib = path.resolve(import.meta.dirname, "../../scripts/lib.mjs");
const preflight = (databaseUrl: string, redisUrl: string) =>
  spawnSync(process.execPath, ["--input-type=module", "-e", `import { preflight } from ${JSON.stringify(lib)}; await preflight(process.argv[1], process.argv[2]);`, databaseUrl, redisUrl], { encoding: "utf8", timeout: 20_000 });

test("an unreachable Redis on a non-default port is named by its host:port in the hint", async () => {
  const port = await freePort();
  const r = preflight(process.env.DATABASE_URL!, `redis://127.0.0.1:${port}/3`);
  expect(r.status).toBe(69);
  expect(r.stderr).toContain(`Redis is not reachable at 127.0.0.1:${port} (REDIS_URL)`);
  expect(r.stderr).toContain(`redis-server --daemonize yes --port ${port}`);
  expect(r.stderr).not.toContain("--port 6379");
  expect(r.stderr).not.toContain("Postgres");
});

test("an unreachable Postgres names its port too; a Redis Cluster URL is checked at its first seed", async () => {
  const [pg, redis] = [await freePort(), await freePort()];
  const r = preflight(`postgresql://postgres@127.0.0.1:${pg}/x`, `redis+cluster://127.0.0.1:${redis},127.0.0.1:1`);
  expect(r.status).toBe(69);
  expect(r.stderr).toContain(`Postgres is not reachable at 127.0.0.1:${pg} (DATABASE_URL): start it on 127.0.0.1:${pg}`);
  expect(r.stderr).toContain(`Redis is not reachable at 127.0.0.1:${redis} (REDIS_URL): start it on 127.0.0.1:${redis}`);
});
