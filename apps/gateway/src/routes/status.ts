import { QUEUES, StatusResponse, type StatusResponse as Status } from "@trendgate/contracts";
import { GROWING_TABLES, parseKey, pingDatabase, tableSizes } from "@trendgate/db";
import { defineRoute } from "../http/route.ts";
import { adminVerifier } from "../http/router.ts";
import type { Deps } from "../deps.ts";

const VERSION = process.env.npm_package_version ?? "0.1.0";
const CHECK_TIMEOUT_MS = 1500;

const withTimeout = <T>(p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS).unref())]);

async function check(fn: () => Promise<unknown>) {
  const t = performance.now();
  try {
    await withTimeout(fn());
    return { status: "up" as const, latency_ms: Math.round((performance.now() - t) * 10) / 10 };
  } catch (e) {
    return { status: "down" as const, latency_ms: null, error: String((e as Error).message ?? e).slice(0, 200) };
  }
}

/** Up or down (and the version) for anyone; `detailed`: latencies, errors, queue depths and table sizes (operators). */
export async function collectStatus(deps: Deps, { detailed }: { detailed: boolean }): Promise<Status> {
  const [postgres, redis] = await Promise.all([check(() => pingDatabase(deps.db)), check(() => deps.redis.ping())]);
  const ok = postgres.status === "up" && redis.status === "up";
  if (!detailed) return { status: ok ? "ok" : "unavailable", version: VERSION, checks: { postgres: { status: postgres.status }, redis: { status: redis.status } } };
  const queues: Status["queues"] = {};
  if (redis.status === "up") {
    await Promise.all(
      Object.values(QUEUES).map(async (name) => {
        const c = await withTimeout(deps.queues.get(name).getJobCounts("waiting", "active", "delayed", "failed")).catch(() => null);
        if (c) queues[name] = { waiting: c.waiting ?? 0, active: c.active ?? 0, delayed: c.delayed ?? 0, failed: c.failed ?? 0 };
      }),
    );
  }
  // Catalog reads only (pg_class, sizes from the file system): cheap, no table is scanned.
  const tables = postgres.status === "up" ? await withTimeout(tableSizes(deps.db.$pool, GROWING_TABLES)).catch(() => undefined) : undefined;
  return { status: ok ? "ok" : "unavailable", version: VERSION, uptime_seconds: Math.round(process.uptime()), checks: { postgres, redis }, queues, ...(tables ? { tables } : {}) };
}

export const statusRoutes = [
  defineRoute({
    method: "get",
    path: "/status",
    operationId: "getStatus",
    summary: "Service health: up or down; details for operators",
    description: "Public: `status`, `version` and each dependency's up or down. Answers 503 (with Retry-After) when Postgres or Redis is down, so load balancers can act on it. " +
      "With the admin token (`Authorization: Bearer <ADMIN_TOKEN>`, or Basic as for /metrics) it adds latencies, errors, uptime, queue depths and table sizes; an API key gets the public answer; any other credential that is not the admin token is 401 and counts as a failed login.",
    tag: "Operations",
    auth: "public",
    responses: {
      200: { description: "All dependencies up", schema: StatusResponse },
      401: { description: "Credentials were sent and are not the admin token" },
      503: { description: "A dependency is down", schema: StatusResponse },
    },
    async handler({ deps, req }) {
      // A client that sends its API key everywhere gets the public answer; any other credential must be the admin token.
      const h = req.get("authorization");
      const detailed = h !== undefined && !parseKey(/^Bearer\s+(\S+)\s*$/i.exec(h)?.[1] ?? "");
      if (detailed) await adminVerifier(deps.config.ADMIN_TOKEN, deps.authFailures)(req);
      const s = await collectStatus(deps, { detailed });
      return { status: s.status === "ok" ? 200 : 503, body: s, headers: s.status === "ok" ? undefined : { "Retry-After": "5" } };
    },
  }),
];
