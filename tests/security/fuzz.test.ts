// Issue 7 ("Hostile input"): every JSON route of the registry, driven with hostile values, must answer without a
// 5xx, with problem+json for every error, and without writing anything when it refuses.
//
//   npm test -- tests/security/fuzz.test.ts                              fixed seed, bounded runs (CI)
//   FUZZ_SEED=123 FUZZ_RUNS=200 npm test -- tests/security/fuzz.test.ts  another seed, more random requests per route
//   FUZZ_SEED=123 FUZZ_PATH="4:0:0" npm test -- tests/security/fuzz.test.ts -t "random hostile requests: GET /api/keys/\{id\}"
//                                                                         replay one shrunk counterexample fast-check printed
//   FUZZ_REPORT=/tmp/fuzz.jsonl npm test -- tests/security               also append every failure as a JSON line
//   FUZZ_STATS=/tmp/fuzz-stats.txt ...                                    answers by status and time per route
//
// Routes come from `allRoutes`: a route added later is fuzzed (fixed table and random requests) with no change here.
// Concurrency pass: every mutating route sent the same benign request several times at once answers no 500.
// Per request: status < 500; a status >= 400 is application/problem+json with type/title/status/code/request_id and
// the HTTP status; validation failures name a location and a path for each error; and after a 4xx the account's rows
// (every table with an account_id: counts and contents) and the queues' job counts are what they were before.
import fc from "fast-check";
import { allRoutes } from "../../apps/gateway/src/routes/index.ts";
import type { RouteDef } from "../../apps/gateway/src/http/route.ts";
import { generateExecutorSigningKey } from "@trendgate/ads";
import { registry } from "@trendgate/connectors";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { DELIVERY_ENV } from "../helpers/stack.ts";
import { fixedPlans, materialize, planArbitrary } from "../helpers/fuzz-cases.ts";
import { AccountProbe, FuzzSession, formatFailure, isJsonRoute, problemsOf, routeName, sendRaw, type Failure } from "../helpers/fuzz-http.ts";
import { exampleFor } from "../helpers/fuzz-schema.ts";
import { HOSTILE_PATH_SEGMENTS, HOSTILE_QUERY_STRINGS } from "../helpers/fuzz-values.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 12); // random requests per route (plus the fixed table)
/** Replays one counterexample: the `path` fast-check printed, with its seed and `-t "<route>"`. */
const PATH = process.env.FUZZ_PATH;
/** Below this the registry import is broken (or routes were dropped) and the test would prove nothing. */
const MIN_ROUTES = 30;

const jsonRoutes = allRoutes.filter(isJsonRoute);
const otherRoutes = allRoutes.filter((r) => !isJsonRoute(r));
const name = (r: RouteDef) => routeName(r);

// Every variable a registered provider names for its client (OAuth id and secret, interaction signing secret).
const CONNECTOR_CLIENTS = Object.fromEntries(registry.all.flatMap((c) => [
  ...(c.manifest.auth.mode === "oauth2" ? [c.manifest.auth.env.clientId, c.manifest.auth.env.clientSecret] : []),
  ...("interactions" in c ? [c.interactions.signingSecretEnv] : []),
]).map((name) => [name, `fuzz-${name.toLowerCase()}`]));
let gw: TestGateway;
let session: FuzzSession;

beforeAll(async () => {
  // Failed authentications are limited per address; the fuzz sends many on purpose, and a 429 would hide the route.
  // Connectors' clients are configured, so their routes are fuzzed past "provider not configured" (501).
  // Likewise the executor routes get a signing key.
  gw = await startGateway({ ...DELIVERY_ENV, AUTH_FAILURES_PER_MINUTE: "100000", ...CONNECTOR_CLIENTS, EXECUTOR_SIGNING_KEY: await generateExecutorSigningKey() });
  session = new FuzzSession(gw, allRoutes);
  await session.start();
}, 60_000);

afterAll(async () => {
  await session?.stop();
  await gw?.close();
});

const report = (fs: Failure[]) => fs.map(formatFailure);

describe(`hostile input (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`, () => {
  test("the registry is loaded and every body schema yields a valid example to mutate", () => {
    expect(allRoutes.length).toBeGreaterThanOrEqual(MIN_ROUTES);
    expect(jsonRoutes.length).toBeGreaterThanOrEqual(MIN_ROUTES - 5);
    expect(jsonRoutes.filter((r) => r.body).length).toBeGreaterThanOrEqual(10);
    expect(jsonRoutes.filter((r) => r.params).length).toBeGreaterThanOrEqual(10);
    expect(jsonRoutes.filter((r) => r.query).length).toBeGreaterThanOrEqual(4);
    const underived = jsonRoutes.filter((r) => r.body).map((r) => ({ route: name(r), ...exampleFor(r.body!) })).filter((e) => !e.valid);
    expect(underived.map((e) => `${e.route}: ${e.issues.join("; ")}`)).toEqual([]);
    // Fixtures were made through the API, so path parameters can name real resources.
    expect(session.params.size).toBeGreaterThan(0);
    // "Nothing half-written" looks at real tables and queues.
    expect(session.probe.tables).toEqual(expect.arrayContaining(["api_keys", "webhook_subscriptions"]));
    expect(gw.deps.queues.all().length).toBeGreaterThan(0);
  });

  test("the checks themselves catch what they must (no vacuous pass)", async () => {
    const res = (status: number, ct: string, text: string) => ({ status, headers: { "content-type": ct }, text, ms: 0 });
    const problem = (o: Record<string, unknown>) => JSON.stringify({ type: "t", title: "t", code: "not_found", request_id: "r", status: 404, ...o });
    expect(problemsOf(res(500, "application/problem+json", problem({ status: 500, code: "internal_error" })))).toEqual([expect.stringMatching(/5xx/)]);
    expect(problemsOf(res(404, "text/html", "<h1>no</h1>")).length).toBeGreaterThan(0);
    expect(problemsOf(res(404, "application/json", problem({})))).toEqual([expect.stringMatching(/problem\+json/)]);
    expect(problemsOf(res(404, "application/problem+json", problem({ status: 400 })))).toEqual([expect.stringMatching(/status/)]);
    expect(problemsOf(res(404, "application/problem+json", problem({ request_id: undefined })))).toEqual([expect.stringMatching(/request_id/)]);
    expect(problemsOf(res(422, "application/problem+json", problem({ status: 422, code: "validation_failed", errors: [{ path: "x" }] })))).toEqual([expect.stringMatching(/location/)]);
    expect(problemsOf(res(404, "application/problem+json; charset=utf-8", problem({})))).toEqual([]);
    // A write made behind the gateway's back is seen as a change of the account's rows.
    const before = await session.probe.take();
    await gw.deps.db.$executeRawUnsafe(`UPDATE webhook_subscriptions SET description = 'changed by the self-check' WHERE account_id = $1`, session.accountId);
    await gw.deps.db.$executeRawUnsafe(`INSERT INTO account_events (id, account_id, type, data) VALUES ('evt_selfcheck', $1, 'fuzz.selfcheck', '{}')`, session.accountId);
    const diff = AccountProbe.diff(before, await session.probe.take());
    expect(diff).toEqual(expect.arrayContaining([expect.stringMatching(/webhook_subscriptions: rows changed in place/), expect.stringMatching(/rows:account_events: \d+ -> \d+/)]));
    session.baseline = await session.probe.take(); // new baseline
  });

  test("without an API key, a malformed percent-encoding in the path is a 4xx problem+json", async () => {
    const bad: string[] = [];
    for (const path of ["/api/integrations/webhooks/%ff", "/api/integrations/webhooks/%", "/api/integrations/webhooks/%E0%A4%A", "/api/keys/%ED%A0%80", "/api/nothing/%ff"]) {
      const res = await sendRaw(session.port, { method: "GET", path, headers: {} });
      const problems = problemsOf(res);
      if (res.status < 400 || res.status >= 500 || problems.length) bad.push(`GET ${path} -> ${res.status} ${res.headers["content-type"] ?? ""}: ${problems.join(" | ") || "not a 4xx"}`);
    }
    expect(bad).toEqual([]);
  });

  // Raw routes (docs, OpenAPI document, metrics) and admin routes are not fuzzed as JSON APIs; their errors must
  // still be problem+json, and hostile paths, queries and credentials must not make them fail.
  test.each(otherRoutes.map((r) => [name(r), r] as const))("raw/admin route %s answers errors as problem+json", async (_n, r) => {
    const bad: string[] = [];
    const tries: { label: string; path: string; headers: Record<string, string> }[] = [
      { label: "no credentials", path: r.path, headers: {} },
      ...HOSTILE_QUERY_STRINGS.map((q) => ({ label: `?${q.label}`, path: `${r.path}?${q.raw}`, headers: {} })),
      ...HOSTILE_PATH_SEGMENTS.filter((s) => s.cls === "malformed-percent").map((s) => ({ label: `${r.path}/${s.label}`, path: `${r.path}/${s.raw}`, headers: {} })),
      { label: "Bearer wrong", path: r.path, headers: { authorization: "Bearer wrong" } },
      { label: "Basic non-UTF-8", path: r.path, headers: { authorization: `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString("base64")}` } },
      { label: "Basic no colon", path: r.path, headers: { authorization: "Basic Zm9v" } },
      { label: "Bearer 8000 chars", path: r.path, headers: { authorization: `Bearer ${"a".repeat(8000)}` } },
    ];
    for (const t of tries) {
      const res = await sendRaw(session.port, { method: r.method, path: t.path, headers: t.headers });
      const problems = problemsOf(res);
      if (problems.length) bad.push(`${t.label}: ${r.method.toUpperCase()} ${t.path.slice(0, 120)} -> ${res.status} ${res.headers["content-type"] ?? ""}: ${problems.join(" | ")}`);
    }
    if (r.auth === "admin") {
      const res = await sendRaw(session.port, { method: r.method, path: r.path, headers: {} });
      if (res.status !== 401) bad.push(`no credentials on an admin route: ${res.status}, not 401`);
    }
    expect(bad).toEqual([]);
  });

  // The fixed table: every hostile value class against every route, so CI catches regressions with few random runs.
  test.each(jsonRoutes.map((r) => [name(r), r] as const))("fixed hostile cases: %s", async (_n, r) => {
    const failures: Failure[] = [];
    for (const plan of fixedPlans(r)) {
      const f = await session.exec(materialize(r, plan, session));
      if (f) failures.push(f);
    }
    expect(report(failures)).toEqual([]);
  }, 120_000);

  // The concurrency pass: every mutating route, sent its benign request BURST times at once (with one shared
  // Idempotency-Key where the route takes one, and without). Races between them answer 404/409, never 500.
  const BURST = 6;
  test.each(jsonRoutes.filter((r) => r.method !== "get").map((r) => [name(r), r] as const))("concurrent identical requests: %s", async (_n, r) => {
    const failures: Failure[] = [];
    const plans = [{ cls: "concurrency", label: `${BURST} at once` }, ...(r.idempotent ? [{ cls: "concurrency", label: `${BURST} at once, one Idempotency-Key`, idem: session.freshIdempotencyKey() }] : [])];
    for (const plan of plans) failures.push(...await session.burst(materialize(r, plan, session), BURST));
    expect(report(failures)).toEqual([]);
  }, 120_000);

  // Random hostile requests (fast-check): the seed is printed on failure; re-run with FUZZ_SEED=<seed> to replay.
  test.each(jsonRoutes.map((r) => [name(r), r] as const))("random hostile requests: %s", async (_n, r) => {
    await fc.assert(
      fc.asyncProperty(planArbitrary(r), async (plan) => {
        const f = await session.exec(materialize(r, plan, session));
        if (f) throw new Error(`FUZZ_SEED=${SEED}\n${formatFailure(f)}`);
      }),
      { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: false, ...(PATH ? { path: PATH } : {}) },
    );
  }, 120_000);
});
