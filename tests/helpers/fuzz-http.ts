// Wire side of the gateway fuzz test: a raw HTTP client (paths, queries and bodies go out byte for byte, no client
// normalisation), the per-request assertions, and the "nothing half-written" snapshot of an account.
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { RouteDef } from "../../apps/gateway/src/http/route.ts";
import type { TestGateway } from "./gateway.ts";
import { exampleFor, exampleProperty } from "./fuzz-schema.ts";

export interface Wire {
  method: string;
  /** Path and query exactly as sent (already percent-encoded). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface WireResponse {
  status: number; // 0: no HTTP answer (connection error or timeout)
  headers: http.IncomingHttpHeaders;
  text: string;
  error?: string;
  ms: number;
}

/** One request of the fuzz: the route it targets, what is hostile about it, and what goes on the wire. */
export interface FuzzRequest {
  route: string; // "POST /api/keys"
  cls: string; // class of hostile value
  label: string; // what is hostile, short
  /** Path parameters of the route (it acts on an existing resource, maybe a fixture). */
  params?: string[];
  wire: Wire;
}

export interface Failure {
  route: string;
  cls: string;
  label: string;
  request: string;
  status: number;
  contentType: string;
  body: string;
  problems: string[];
}

export const routeName = (r: Pick<RouteDef, "method" | "path">) => `${r.method.toUpperCase()} ${r.path}`;
const BODY_METHODS = new Set(["post", "put", "patch"]);
export const takesBody = (r: RouteDef) => BODY_METHODS.has(r.method);
export const isJsonRoute = (r: RouteDef) => !r.raw && r.auth !== "admin";
export const paramNames = (r: RouteDef) => [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);

const REQUEST_TIMEOUT_MS = 15_000;
const agent = new http.Agent({ keepAlive: false }); // a refused body can leave a keep-alive socket unusable

export function sendRaw(port: number, w: Wire): Promise<WireResponse> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...w.headers };
    if (w.body !== undefined) headers["content-length"] = String(Buffer.byteLength(w.body));
    let req: http.ClientRequest;
    const fail = (err: unknown) => resolve({ status: 0, headers: {}, text: "", error: String((err as Error)?.message ?? err), ms: performance.now() - t0 });
    try {
      req = http.request({ host: "127.0.0.1", port, method: w.method.toUpperCase(), path: w.path, headers, agent });
    } catch (err) {
      return fail(`client refused to send: ${String((err as Error).message)}`);
    }
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on("error", fail);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", fail);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), ms: performance.now() - t0 }));
    });
    req.end(w.body);
  });
}

const LOCATIONS = new Set(["body", "query", "path", "header"]);

/** The per-request contract: no 5xx; every error is problem+json whose status matches; validation names its fields. */
export function problemsOf(res: WireResponse): string[] {
  const out: string[] = [];
  if (res.status === 0) return [`no HTTP answer: ${res.error}`];
  if (res.status >= 500) out.push(`status ${res.status} (5xx)`);
  if (res.status < 400) return out;
  const ct = String(res.headers["content-type"] ?? "");
  if (!/^application\/problem\+json\s*(;|$)/i.test(ct)) out.push(`Content-Type is ${ct || "(none)"}, not application/problem+json`);
  let body: any;
  try { body = JSON.parse(res.text); } catch { out.push(`body is not JSON: ${JSON.stringify(res.text.slice(0, 120))}`); return out; }
  if (!body || typeof body !== "object" || Array.isArray(body)) { out.push("body is not a JSON object"); return out; }
  for (const k of ["type", "title", "code", "request_id"]) if (typeof body[k] !== "string" || !body[k]) out.push(`problem has no ${k}`);
  if (body.status !== res.status) out.push(`problem status ${JSON.stringify(body.status)} != HTTP ${res.status}`);
  if (body.code === "validation_failed") {
    if (!Array.isArray(body.errors) || !body.errors.length) out.push("validation_failed without errors[]");
    else for (const e of body.errors) {
      if (!LOCATIONS.has(e?.location)) out.push(`errors[] item without a location: ${JSON.stringify(e).slice(0, 160)}`);
      if (typeof e?.path !== "string" || !e.path) out.push(`errors[] item without a path: ${JSON.stringify(e).slice(0, 160)}`);
    }
  }
  return out;
}

// ---- Account snapshot ----------------------------------------------------------------------------------------------

export type Snapshot = Map<string, string>;

/** Columns that legitimately change on a refused request (authentication records when a key was last used). */
const VOLATILE_COLUMNS = ["last_used_at"];

export class AccountProbe {
  private sql?: string;
  tables: string[] = [];
  constructor(private readonly gw: TestGateway, private readonly accountId: string) {}

  async init() {
    const rows = await this.gw.deps.db.$queryRawUnsafe<{ table_name: string }[]>(
      `SELECT DISTINCT c.table_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE c.column_name = 'account_id' AND c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY 1`);
    this.tables = rows.map((r) => r.table_name);
    const strip = VOLATILE_COLUMNS.map((c) => ` - '${c}'`).join("");
    this.sql = this.tables
      .map((t) => `SELECT '${t}' AS t, count(*)::int AS n, md5(coalesce(string_agg((to_jsonb(x)${strip})::text, '|' ORDER BY (to_jsonb(x)${strip})::text), '')) AS h FROM "${t}" x WHERE x.account_id = $1`)
      .join(" UNION ALL ");
  }

  /** Row count and content digest of every table with an account_id, and the job counts of every queue. */
  async take(): Promise<Snapshot> {
    const snap: Snapshot = new Map();
    // deps.db.$pool is the pg pool under the Prisma client; a named (prepared) statement is planned once, not per request.
    const { rows } = await this.gw.deps.db.$pool.query<{ t: string; n: number; h: string }>({ name: `fuzz-snapshot-${crypto.createHash("sha1").update(this.sql!).digest("hex").slice(0, 16)}`, text: this.sql!, values: [this.accountId] });
    const jobs = await Promise.all(this.gw.deps.queues.all().map(async (q) => [q.name, await q.getJobCounts()] as const));
    for (const r of rows) { snap.set(`rows:${r.t}`, String(r.n)); snap.set(`content:${r.t}`, r.h); }
    for (const [name, c] of jobs) snap.set(`jobs:${name}`, JSON.stringify(Object.fromEntries(Object.entries(c).filter(([, v]) => v).sort())));
    return snap;
  }

  static diff(a: Snapshot, b: Snapshot): string[] {
    const out: string[] = [];
    for (const k of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(k) === b.get(k)) continue;
      if (k.startsWith("content:") && a.get(k.replace("content:", "rows:")) !== b.get(k.replace("content:", "rows:"))) continue; // the count says it
      out.push(k.startsWith("content:") ? `${k.slice(8)}: rows changed in place` : `${k}: ${a.get(k) ?? "-"} -> ${b.get(k) ?? "-"}`);
    }
    return out;
  }
}

// ---- The fuzz session: one gateway, one account, fixtures, and the checks after every request ----------------------

export class FuzzSession {
  port = 0;
  server?: http.Server;
  accountId = "";
  authHeader = "";
  probe!: AccountProbe;
  /** Values for path parameters, learned from the Location of fixtures created through the API. */
  params = new Map<string, string>();
  failures: Failure[] = [];
  requests = 0;
  reseeds = 0;
  /** Per route: answers by status, and time spent (printed with FUZZ_STATS=<file>). */
  stats = new Map<string, { n: number; ms: number; status: Record<string, number> }>();
  baseline?: Snapshot;
  private idem = 0;

  constructor(readonly gw: TestGateway, readonly routes: RouteDef[]) {}

  async start() {
    const acct = await this.gw.account("enterprise"); // the largest rate-limit quota: a 429 would hide the route
    this.accountId = acct.accountId;
    this.authHeader = acct.auth.Authorization;
    this.server = http.createServer(this.gw.app);
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
    this.probe = new AccountProbe(this.gw, this.accountId);
    await this.probe.init();
    await this.seed();
  }

  async stop() {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    if (process.env.FUZZ_STATS) {
      const lines = [...this.stats].map(([r, v]) => `${r}\t${v.n} requests\t${Math.round(v.ms)} ms\t${JSON.stringify(v.status)}`);
      fs.appendFileSync(process.env.FUZZ_STATS, [...lines, `total ${this.requests} requests, ${this.reseeds} reseeds`, ""].join("\n"));
    }
    if (process.env.FUZZ_REPORT && this.failures.length) {
      fs.appendFileSync(process.env.FUZZ_REPORT, this.failures.map((f) => JSON.stringify(f)).join("\n") + "\n");
    }
  }

  /**
   * Fixtures, made through the API itself: every PUT/POST route without path parameters is sent its schema example
   * (connections configured, a key and a webhook created). A Location answer teaches a path parameter a real id,
   * so hostile bodies and queries also reach handlers past their "not found". Routes added later are seeded the same way.
   */
  async seed() {
    const candidates = this.routes.filter((r) => isJsonRoute(r) && r.auth === "apiKey" && r.body && takesBody(r) && !r.path.includes("{"))
      .sort((a, b) => Number(b.method === "put") - Number(a.method === "put"));
    for (const r of candidates) {
      const learned = await this.sendSeed(r);
      for (const n of learned) this.seedFor.set(n, r);
    }
    this.baseline = await this.probe.take();
  }

  /** Seed route that taught each path parameter, and the state (`GET` status and `status` field) it left. */
  private seedFor = new Map<string, RouteDef>();
  private seededState = new Map<string, string>();
  /** Parameters whose fixture a successful request may have changed (deleted, revoked, paused...). */
  private suspect = new Set<string>();

  private async sendSeed(r: RouteDef): Promise<string[]> {
    const t0 = performance.now();
    const res = await sendRaw(this.port, { method: r.method, path: r.path, headers: { authorization: this.authHeader, "content-type": "application/json" }, body: JSON.stringify(exampleFor(r.body!).value) });
    this.count(`seed ${routeName(r)}`, res.status, t0);
    const loc = res.headers.location;
    if (res.status >= 300 || !loc) return [];
    const learned = this.learn(String(loc));
    for (const n of learned) this.seededState.set(n, await this.fixtureState(n));
    return learned;
  }

  /** The fixture behind a parameter, as its own GET route sees it: HTTP status and `status` field. */
  private async fixtureState(name: string): Promise<string> {
    const get = this.routes.find((r) => r.method === "get" && isJsonRoute(r) && r.path.endsWith(`/{${name}}`));
    if (!get) return "unknown";
    const path = get.path.replace(/\{(\w+)\}/g, (_, n: string) => this.paramValue(get, n));
    const res = await sendRaw(this.port, { method: "get", path, headers: { authorization: this.authHeader } });
    let status: unknown;
    try { status = JSON.parse(res.text)?.status; } catch { /* not JSON */ }
    return `${res.status} ${String(status)}`;
  }

  /** Re-creates the fixtures a successful request changed: the ones its path named, if they no longer look the same. */
  private async repair() {
    const names = [...this.suspect];
    this.suspect.clear();
    for (const n of names) {
      const seed = this.seedFor.get(n);
      if (!seed || (await this.fixtureState(n)) === this.seededState.get(n)) continue;
      this.reseeds++;
      await this.sendSeed(seed);
    }
    this.baseline = await this.probe.take();
  }

  private count(key: string, status: number, t0: number) {
    const st = this.stats.get(key) ?? { n: 0, ms: 0, status: {} };
    st.n++; st.ms += performance.now() - t0; st.status[status] = (st.status[status] ?? 0) + 1;
    this.stats.set(key, st);
  }

  private learn(location: string): string[] {
    const path = location.split("?")[0];
    const learned: string[] = [];
    for (const r of this.routes) {
      const names = paramNames(r);
      if (!names.length) continue;
      const re = new RegExp("^" + r.path.split(/\{\w+\}/).map((p) => p.replace(/[.*+?^$(){}|[\]\\]/g, "\\$&")).join("([^/]+)") + "$");
      const m = re.exec(path);
      if (m) names.forEach((n, i) => { this.params.set(n, decodeURIComponent(m[i + 1])); learned.push(n); });
    }
    return [...new Set(learned)];
  }

  /** A valid value for a path parameter: a fixture's id when one is known, else the schema's own example. */
  paramValue(r: RouteDef, name: string): string {
    return encodeURIComponent(this.params.get(name) ?? (r.params ? exampleProperty(r.params, name) : "example"));
  }

  freshIdempotencyKey() {
    return `fuzz-${process.pid}-${Date.now()}-${++this.idem}`;
  }

  /** Sends one request, checks it, and records (and returns) what went wrong, if anything. */
  async exec(req: FuzzRequest): Promise<Failure | undefined> {
    if (this.suspect.size) await this.repair();
    if (!this.baseline) { const ts = performance.now(); this.baseline = await this.probe.take(); this.count("(snapshot)", 0, ts); }
    this.requests++;
    const t0 = performance.now();
    const res = await sendRaw(this.port, req.wire);
    const problems = problemsOf(res);
    if (({} as Record<string, unknown>).polluted !== undefined || Object.prototype.hasOwnProperty.call(Object.prototype, "polluted")) {
      problems.push("Object.prototype was polluted (has `polluted`)");
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
    // Nothing half-written: a refusal leaves the account as it was just before the request. The baseline is taken
    // lazily: after a success, before the next request; a refusal's own snapshot is the next baseline.
    if (res.status >= 400 && this.baseline) {
      const ts = performance.now();
      const after = await this.probe.take();
      this.count("(snapshot)", 0, ts);
      const d = AccountProbe.diff(this.baseline, after);
      if (d.length) problems.push(`half-written after ${res.status}: ${d.join("; ")}`);
      this.baseline = after;
    } else this.baseline = undefined; // a success may write, even a GET (an OAuth `auth` route stores its state)
    // A success on a resource named in the path may have changed or removed a fixture: check it before the next
    // request (and make it again if so). A PUT or POST without path parameters leaves existing fixtures be.
    if (res.status >= 200 && res.status < 300 && req.wire.method.toLowerCase() !== "get") for (const n of req.params ?? []) this.suspect.add(n);
    this.count(req.route, res.status, t0);
    if (!problems.length) return undefined;
    const f: Failure = {
      route: req.route, cls: req.cls, label: req.label, request: describeWire(req.wire), status: res.status,
      contentType: String(res.headers["content-type"] ?? ""), body: res.text.slice(0, 400), problems,
    };
    this.failures.push(f);
    return f;
  }

  /**
   * The concurrency pass: `n` copies of one request at once (same body, same Idempotency-Key if any), as a client
   * retrying too eagerly or a double click sends them. Losers of a race answer 404 or 409, never 500; an expected
   * 5xx of a provider route (501 not configured, 502 the provider failed) is not a race and is allowed. The fixtures
   * the request named are checked (and made again) before the next request.
   */
  async burst(req: FuzzRequest, n: number): Promise<Failure[]> {
    if (this.suspect.size) await this.repair();
    this.requests += n;
    const t0 = performance.now();
    const answers = await Promise.all(Array.from({ length: n }, () => sendRaw(this.port, req.wire)));
    for (const p of req.params ?? []) this.suspect.add(p);
    this.baseline = undefined;
    const failures: Failure[] = [];
    for (const res of answers) {
      this.count(`${req.route} (burst)`, res.status, t0);
      const problems = problemsOf(res).filter((p) => !(/5xx/.test(p) && [501, 502, 503].includes(res.status)));
      if (!problems.length) continue;
      failures.push({
        route: req.route, cls: req.cls, label: req.label, request: describeWire(req.wire), status: res.status,
        contentType: String(res.headers["content-type"] ?? ""), body: res.text.slice(0, 400), problems,
      });
    }
    this.failures.push(...failures);
    return failures;
  }
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

export function describeWire(w: Wire): string {
  const body = w.body === undefined ? "" : ` body=${clip(typeof w.body === "string" ? w.body : `<bytes ${w.body.toString("hex")}>`, 160)}`;
  const auth = w.headers.authorization === undefined ? " (no Authorization)" : /^Bearer tg_[A-Za-z0-9_-]{20,}$/.test(w.headers.authorization) ? "" /* the session's key: never printed */ : ` Authorization=${clip(JSON.stringify(w.headers.authorization), 40)}`;
  const idem = w.headers["idempotency-key"] !== undefined && !w.headers["idempotency-key"].startsWith("fuzz-") ? ` Idempotency-Key=${clip(JSON.stringify(w.headers["idempotency-key"]), 40)}` : "";
  const ct = w.headers["content-type"] && w.headers["content-type"] !== "application/json" ? ` Content-Type=${w.headers["content-type"]}` : "";
  return `${w.method.toUpperCase()} ${clip(w.path, 200)}${auth}${idem}${ct}${body}`;
}

export function formatFailure(f: Failure): string {
  return `${f.route} [${f.cls}] ${f.label}\n    sent: ${f.request}\n    got:  ${f.status} ${f.contentType} ${clip(f.body.replace(/\s+/g, " "), 240)}\n    why:  ${f.problems.join(" | ")}`;
}
