// A mute's recurring rule is expanded with bounds (packages/trends/src/events/mutes.ts): a rule that never occurs
// (FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30) used to hold the gateway's only thread for 20-40 s, freezing every account, and
// an hourly rule whose INTERVAL never lands on its BYHOUR held it forever. The gateway runs in its own process here,
// so a request it cannot answer fails this test (each request gives up after a generous 20 s) instead of freezing the
// test itself. The last tests check the bounded expansion against the rrule library's own, unbounded one.
import type { ChildProcess } from "node:child_process";
import { createAccount, createApiKey, createDb, createMute, type Db } from "@trendgate/db";
import { isMuteActive, nextOccurrence, ruleProblem, type MuteRule } from "@trendgate/trends";
import rrule from "rrule";
import { waitFor } from "../helpers/config.ts";
import { freePort } from "../helpers/free-port.ts";
import { spawnApp } from "../helpers/process.ts";

let db: Db;
let child: ChildProcess;
let base: string;

beforeAll(async () => {
  db = createDb(process.env.DATABASE_URL!);
  const port = await freePort();
  child = spawnApp("gateway", { env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", QUEUE_PREFIX: `rb${port}` }, stdio: "ignore" });
  base = `http://127.0.0.1:${port}`;
  await waitFor(() => fetch(`${base}/status`).then((r) => r.ok, () => false), { timeoutMs: 20_000 });
}, 40_000);
afterAll(async () => {
  child.kill("SIGKILL"); // a gateway stuck in a rule would never act on SIGTERM
  await db.$disconnect();
});

async function account() {
  const a = await createAccount(db, "rrule bounds");
  const { key } = await createApiKey(db, a.id, "k");
  return { accountId: a.id, key };
}

/** One request; a gateway that does not answer within 20 s fails the test here rather than hanging it. */
async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method, signal: AbortSignal.timeout(20_000),
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const refusedNamingRrule = (res: { status: number; body: { code?: string; errors?: { path: string; code: string }[] } }) =>
  expect([res.status, res.body.code, res.body.errors?.map((e) => [e.path, e.code])]).toEqual([422, "validation_failed", [["rrule", "invalid_rrule"]]]);

// An hour that FREQ=HOURLY;INTERVAL=24 never reaches: a rule is counted from midnight of the mute's first day.
const unreachableHour = () => 12;

test("a rule that never occurs answers 422 naming rrule, stores nothing, and another account is served meanwhile", async () => {
  const a = await account();
  const b = await account();
  const never = { topic: "AI agents", rrule: "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", window_minutes: 60 };
  // Three at once (as in the report), and another account's read while they are processed: all are answered.
  const [r1, r2, r3, other] = await Promise.all([
    call(a.key, "POST", "/api/mutes", never), call(a.key, "POST", "/api/mutes", never), call(a.key, "POST", "/api/mutes", never),
    call(b.key, "GET", "/api/mutes"),
  ]);
  for (const r of [r1, r2, r3]) {
    refusedNamingRrule(r);
    expect(r.body.errors[0].message).toMatch(/no occurrence in the next 5 years/);
  }
  expect(other.status).toBe(200);
  expect((await call(a.key, "GET", "/api/mutes")).body.data).toEqual([]);
}, 90_000);

test("other pathological rules are refused or accepted with bounded work; a stored one reads as never active", async () => {
  const a = await account();
  const refused = [
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31",
    "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30",
    "FREQ=WEEKLY;BYYEARDAY=366;BYMONTH=1",
    "FREQ=MONTHLY;INTERVAL=12;BYMONTH=2;BYMONTHDAY=30",
    `FREQ=HOURLY;INTERVAL=24;BYHOUR=${unreachableHour()}`, // the library would loop forever inside one step
    "FREQ=DAILY;INTERVAL=-1;BYMONTH=2;BYMONTHDAY=30",
    "FREQ=DAILY;INTERVAL=0",
    "FREQ=MINUTELY;BYSECOND=0,30", // not a frequency mutes take
  ];
  for (const rule of refused) {
    const res = await call(a.key, "POST", "/api/mutes", { topic: "t", rrule: rule, window_minutes: 30 });
    expect([rule, res.status, res.body.errors?.map((e: { path: string }) => e.path)]).toEqual([rule, 422, ["rrule"]]);
  }
  expect((await call(a.key, "GET", "/api/mutes")).body.data).toEqual([]);

  const minutes = Array.from({ length: 60 }, (_, i) => i).join(",");
  const accepted: [string, number, boolean][] = [
    ["FREQ=DAILY;INTERVAL=1000000", 1440, true], // occurs at midnight today (a day's window: open now), then not for millennia
    // Every minute, on the minute (a rule's own times start at second 0), counted from midnight: a window is open now.
    [`FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;BYMINUTE=${minutes}`, 1, true],
  ];
  for (const [rule, window, activeNow] of accepted) {
    const res = await call(a.key, "POST", "/api/mutes", { topic: "t", rrule: rule, window_minutes: window });
    expect([rule, res.status, res.body.active_now]).toEqual([rule, 201, activeNow]);
    expect((await call(a.key, "GET", `/api/mutes/${res.body.id}`)).body.rrule).toBe(rule);
  }

  // Rows stored before the bounds (written straight to the database) are shown, never active, without a hang.
  const startsAt = new Date("2026-01-01T05:00:00Z");
  const stored = [];
  for (const rule of ["FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "FREQ=HOURLY;INTERVAL=24;BYHOUR=17"]) {
    stored.push(await createMute(db, {
      accountId: a.accountId, topic: "old", category: null, startsAt, endsAt: null, rrule: rule, windowMinutes: 60, reason: null, createdBy: "test",
    }));
  }
  const list = await call(a.key, "GET", "/api/mutes");
  expect(list.status).toBe(200);
  for (const row of stored) {
    expect(list.body.data.find((m: { id: string }) => m.id === row.id)).toMatchObject({ rrule: row.rrule, active_now: false });
    expect((await call(a.key, "GET", `/api/mutes/${row.id}`)).body).toMatchObject({ id: row.id, active_now: false });
  }
}, 120_000);

test("an ordinary rule still works end to end: weekend windows", async () => {
  const a = await account();
  const created = await call(a.key, "POST", "/api/mutes", { category: "retail", rrule: "FREQ=WEEKLY;BYDAY=SA,SU", window_minutes: 240, reason: "weekends" });
  expect(created.status).toBe(201);
  // No BYHOUR: 00:00-04:00 UTC on Saturdays and Sundays, the creation day's included.
  const start = new Date(created.body.starts_at);
  const open = [0, 6].includes(start.getUTCDay()) && start.getUTCHours() < 4;
  expect(created.body).toMatchObject({ category: "retail", rrule: "FREQ=WEEKLY;BYDAY=SA,SU", window_minutes: 240, time_zone: "UTC", reason: "weekends", active_now: open });
  const read = await call(a.key, "GET", `/api/mutes/${created.body.id}`);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ id: created.body.id, rrule: "FREQ=WEEKLY;BYDAY=SA,SU", window_minutes: 240 });
  expect((await call(a.key, "GET", "/api/mutes")).body.data.map((m: { id: string }) => m.id)).toEqual([created.body.id]);
  expect((await call(a.key, "DELETE", `/api/mutes/${created.body.id}`)).status).toBe(204);
}, 60_000);

test("the bounded rule: pathological rules are named and never occur", () => {
  const now = new Date("2026-03-10T14:23:11.123Z");
  const cases: [string, RegExp][] = [
    ["FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", /no occurrence in the next 5 years/],
    ["FREQ=WEEKLY;BYMONTH=4;BYMONTHDAY=31", /no occurrence in the next 5 years/],
    ["FREQ=HOURLY;INTERVAL=24;BYHOUR=3", /never reaches a BYHOUR hour/],
    ["FREQ=HOURLY;INTERVAL=99999999999", /INTERVAL must be a whole number within/],
    ["FREQ=YEARLY;BYYEARDAY=0", /BYYEARDAY must be whole numbers within/],
    ["FREQ=SECONDLY", /FREQ must be/],
  ];
  for (const [rule, problem] of cases) {
    expect([rule, ruleProblem(rule, now)]).toEqual([rule, expect.stringMatching(problem)]);
    expect(nextOccurrence(rule, now, now)).toBeNull();
  }
  // Occurs, but not within 5 years: refused all the same (Monday 29 February 2044).
  expect(ruleProblem("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", now)).toMatch(/no occurrence in the next 5 years/);
  expect(nextOccurrence("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", now, now)).toEqual(new Date("2044-02-29T00:00:00Z"));
  expect(ruleProblem("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29", now)).toBeNull(); // 29 February 2028
  expect(nextOccurrence("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29", now, now)).toEqual(new Date("2028-02-29T00:00:00Z"));
  expect(ruleProblem("FREQ=HOURLY;INTERVAL=8;BYHOUR=8,16", now)).toBeNull(); // from 00:00, every 8 hours: 8, 16, 0...
  expect(ruleProblem("FREQ=HOURLY;INTERVAL=8;BYHOUR=6,22", now)).toMatch(/never reaches a BYHOUR hour/);
});

// The pre-bounds reading, straight from the library: the last occurrence at or before now, and its window. A rule is
// counted from midnight (UTC here) of the mute's first day, as mutes read them.
function libraryActive(m: MuteRule, now: Date) {
  if (now < m.startsAt) return false;
  const dtstart = new Date(Date.UTC(m.startsAt.getUTCFullYear(), m.startsAt.getUTCMonth(), m.startsAt.getUTCDate()));
  const last = rrule.rrulestr(m.rrule!, { dtstart }).before(now, true);
  return !!last && now.getTime() < last.getTime() + m.windowMinutes! * 60_000;
}

test("the bounded rule reads ordinary rules as the library does, check after check", () => {
  const startsAt = new Date("2025-06-03T07:41:13.250Z");
  const rules: [string, number][] = [
    ["FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18;BYMINUTE=0;BYSECOND=0", 240],
    ["FREQ=WEEKLY;BYDAY=SA,SU", 240],
    ["FREQ=HOURLY;BYMINUTE=0", 5],
    ["FREQ=HOURLY;INTERVAL=5;BYMINUTE=30", 20],
    ["FREQ=HOURLY;INTERVAL=7;BYHOUR=1,2,3,9", 30],
    ["FREQ=DAILY;INTERVAL=3;BYHOUR=9", 60],
    ["FREQ=DAILY;BYHOUR=9,13;BYMINUTE=0,30;BYSETPOS=2,-1", 10],
    ["FREQ=MONTHLY;BYDAY=-1FR", 600],
    ["FREQ=MONTHLY;INTERVAL=2;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", 300],
    ["FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;BYSETPOS=-1", 120],
    ["FREQ=WEEKLY;WKST=SU;INTERVAL=3;BYDAY=SU,TU;BYHOUR=7", 180],
    ["FREQ=DAILY;COUNT=40;BYHOUR=12", 30],
    ["FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=23", 90],
    ["FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", 1440],
    ["FREQ=DAILY;UNTIL=20250801T000000Z;BYHOUR=6", 120],
  ];
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let differ = 0;
  let active = 0;
  for (const [rule, window] of rules) {
    const m: MuteRule = { id: "mut_t", topic: "t", category: null, startsAt, endsAt: null, rrule: rule, windowMinutes: window, timeZone: "UTC" };
    // Later and later instants (as the worker checks), often just inside or past a window, then a few out of order.
    const instants: number[] = [];
    for (let t = startsAt.getTime() - 3_600_000; t < startsAt.getTime() + 120 * 86_400_000;) {
      t += Math.floor(random() < 0.3 ? random() * window * 60_000 : random() * 2 * 86_400_000);
      instants.push(t);
    }
    for (let i = 0; i < 10; i++) instants.push(startsAt.getTime() + Math.floor(random() * 30 * 86_400_000));
    for (const t of instants) {
      const now = new Date(t);
      const expected = libraryActive(m, now);
      if (expected) active++;
      if (isMuteActive(m, now) !== expected) differ++;
    }
  }
  expect(active).toBeGreaterThan(20); // the instants do land in windows
  expect(differ).toBe(0);
}, 60_000);

test("a years-old hourly mute reads correctly within a few checks after a restart (each check's walk is bounded)", () => {
  const m: MuteRule = {
    id: "mut_h", topic: "t", category: null, startsAt: new Date("2023-01-01T00:00:00Z"), endsAt: null, rrule: "FREQ=HOURLY;BYMINUTE=0", windowMinutes: 5, timeZone: "UTC",
  };
  const inside = new Date("2026-03-10T14:02:00Z");
  const checks = Array.from({ length: 40 }, () => isMuteActive(m, inside));
  expect(checks.at(-1)).toBe(true);
  expect(isMuteActive(m, new Date("2026-03-10T14:30:00Z"))).toBe(false);
  expect(isMuteActive(m, new Date("2026-03-10T15:04:59Z"))).toBe(true);
});
