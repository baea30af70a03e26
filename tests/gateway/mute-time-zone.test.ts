// A mute's rule in its own time zone (issue 49): `time_zone` is validated, stored and read back; a rule's windows sit
// at its own wall-clock times there (BYHOUR=18 is 18:00-22:00 with a 4 h window, whatever minute the mute was made),
// also across daylight-saving changes; a bad rule is refused in the API's words with an example of a valid one.
import { createMute, findAccountMute } from "@trendgate/db";
import { isMuteActive, type MuteRule } from "@trendgate/trends";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
let a: Awaited<ReturnType<TestGateway["account"]>>;
beforeAll(async () => {
  gw = await startGateway();
  a = await gw.account();
});
afterAll(async () => { await gw.close(); });

const WEEKEND_EVENINGS = "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18";
const mute = (over: Partial<MuteRule>): MuteRule => ({
  id: "mut_tz", topic: null, category: "retail", startsAt: new Date("2027-03-01T00:00:00Z"), endsAt: null,
  rrule: WEEKEND_EVENINGS, windowMinutes: 240, timeZone: "Europe/Berlin", ...over,
});
/** The instants of `instants` (ISO, UTC) at which `m` holds events back. */
const activeAt = (m: MuteRule, instants: string[]) => instants.filter((s) => isMuteActive(m, new Date(s)));

describe("time_zone", () => {
  test("is stored (canonical case), read back, and a read posts back unchanged; UTC unless given", async () => {
    const created = await gw.http.post("/api/mutes").set(a.auth)
      .send({ category: "retail", rrule: WEEKEND_EVENINGS, window_minutes: 240, time_zone: "europe/berlin", reason: "evenings" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ rrule: WEEKEND_EVENINGS, window_minutes: 240, time_zone: "Europe/Berlin" });
    expect((await findAccountMute(gw.deps.db, a.accountId, created.body.id))?.timeZone).toBe("Europe/Berlin");

    const read = (await gw.http.get(`/api/mutes/${created.body.id}`).set(a.auth)).body;
    expect(read.time_zone).toBe("Europe/Berlin");
    const { category, rrule, window_minutes, time_zone, reason } = read;
    const again = await gw.http.post("/api/mutes").set(a.auth).send({ category, rrule, window_minutes, time_zone, reason });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ category, rrule, window_minutes, time_zone, reason });

    const plain = await gw.http.post("/api/mutes").set(a.auth).send({ topic: "x", rrule: WEEKEND_EVENINGS, window_minutes: 60 });
    expect([plain.status, plain.body.time_zone]).toEqual([201, "UTC"]);
    const listed = (await gw.http.get("/api/mutes").set(a.auth)).body.data;
    expect(listed.map((m: { time_zone: string }) => m.time_zone)).toEqual(["UTC", "Europe/Berlin", "Europe/Berlin"]);

    // A mute made without one (an operator's, from chat) reads as UTC.
    const direct = await createMute(gw.deps.db, {
      accountId: a.accountId, topic: "y", category: null, startsAt: new Date(), endsAt: null, rrule: null, windowMinutes: null, reason: null, createdBy: "test",
    });
    expect((await gw.http.get(`/api/mutes/${direct.id}`).set(a.auth)).body.time_zone).toBe("UTC");
  });

  test("an unknown or malformed time zone is 422 validation_failed at time_zone", async () => {
    for (const time_zone of ["Mars/Olympus_Mons", "+01:00", "", "Europe/Berlin\u0000", "../UTC", 60]) {
      const res = await gw.http.post("/api/mutes").set(a.auth).send({ topic: "x", rrule: WEEKEND_EVENINGS, window_minutes: 60, time_zone });
      const paths = new Set(res.body.errors?.map((e: { path: string }) => e.path));
      expect([time_zone, res.status, res.body.code, [...paths]]).toEqual([time_zone, 422, "validation_failed", ["time_zone"]]);
    }
  });
});

describe("windows at the rule's own times, in the mute's time zone", () => {
  // Saturday 6 and Sunday 7 March 2027; Berlin is UTC+1 (CET) then.
  const around = ["2027-03-06T16:59:59Z", "2027-03-06T17:00:00Z", "2027-03-06T20:59:59Z", "2027-03-06T21:00:00Z", "2027-03-07T18:30:00Z", "2027-03-08T17:30:00Z"];
  const inside = ["2027-03-06T17:00:00Z", "2027-03-06T20:59:59Z", "2027-03-07T18:30:00Z"];

  test("BYHOUR=18 with 240 minutes is 18:00-22:00 local on Saturdays and Sundays, whatever minute the mute was made", () => {
    for (const made of ["2027-03-01T00:00:00Z", "2027-03-01T08:37:12.345Z", "2027-03-05T22:59:59Z", "2027-03-05T23:00:00Z", "2027-03-06T16:59:00Z"]) {
      expect([made, activeAt(mute({ startsAt: new Date(made) }), around)]).toEqual([made, inside]);
    }
    // The same rule in UTC: 18:00-22:00 UTC.
    expect(activeAt(mute({ timeZone: "UTC" }), ["2027-03-06T17:30:00Z", "2027-03-06T18:00:00Z", "2027-03-06T21:59:00Z", "2027-03-06T22:00:00Z"]))
      .toEqual(["2027-03-06T18:00:00Z", "2027-03-06T21:59:00Z"]);
  });

  test("a mute made inside one of its windows holds from then to the window's end", () => {
    const m = mute({ startsAt: new Date("2027-03-06T19:42:05Z") }); // Saturday 20:42 in Berlin
    expect(activeAt(m, ["2027-03-06T19:42:04Z", "2027-03-06T19:42:05Z", "2027-03-06T20:59:59Z", "2027-03-06T21:00:00Z"]))
      .toEqual(["2027-03-06T19:42:05Z", "2027-03-06T20:59:59Z"]);
  });

  test("18:00 stays 18:00 local across both daylight-saving changes (Europe/Berlin, last Sundays of March and October)", () => {
    const m = mute({ startsAt: new Date("2027-03-20T09:37:12Z") });
    // Saturday 27 March 18:00 CET is 17:00Z; Sunday 28 March (clocks went forward at 01:00Z) 18:00 CEST is 16:00Z.
    expect(activeAt(m, ["2027-03-27T16:59:59Z", "2027-03-27T17:00:00Z", "2027-03-27T20:59:59Z", "2027-03-27T21:00:00Z"]))
      .toEqual(["2027-03-27T17:00:00Z", "2027-03-27T20:59:59Z"]);
    expect(activeAt(m, ["2027-03-28T15:59:59Z", "2027-03-28T16:00:00Z", "2027-03-28T19:59:59Z", "2027-03-28T20:00:00Z"]))
      .toEqual(["2027-03-28T16:00:00Z", "2027-03-28T19:59:59Z"]);
    // Saturday 30 October 18:00 CEST is 16:00Z; Sunday 31 October (clocks went back at 01:00Z) 18:00 CET is 17:00Z.
    expect(activeAt(m, ["2027-10-30T15:59:59Z", "2027-10-30T16:00:00Z", "2027-10-30T19:59:59Z", "2027-10-30T20:00:00Z"]))
      .toEqual(["2027-10-30T16:00:00Z", "2027-10-30T19:59:59Z"]);
    expect(activeAt(m, ["2027-10-31T16:59:59Z", "2027-10-31T17:00:00Z", "2027-10-31T20:59:59Z", "2027-10-31T21:00:00Z"]))
      .toEqual(["2027-10-31T17:00:00Z", "2027-10-31T20:59:59Z"]);
  });

  test("the answers do not depend on the machine's own time zone (the library's tzid option would)", () => {
    const saved = process.env.TZ;
    try {
      for (const tz of ["America/New_York", "Asia/Tokyo"]) {
        process.env.TZ = tz; // Node picks a new TZ up at once
        const m = mute({ startsAt: new Date(`2027-03-2${tz.length % 5}T11:11:11Z`) }); // a start of its own: parsed afresh
        expect([tz, activeAt(m, ["2027-03-27T17:00:00Z", "2027-03-27T16:30:00Z", "2027-03-28T16:00:00Z", "2027-03-28T20:00:00Z"])])
          .toEqual([tz, ["2027-03-27T17:00:00Z", "2027-03-28T16:00:00Z"]]);
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test("a time the clocks skip starts with the offset before the change; one they repeat, at its first occurrence", () => {
    const m = mute({ rrule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", windowMinutes: 30 });
    // 28 March: 02:30 does not exist in Berlin; it is read as 02:30 CET, i.e. 03:30 CEST (01:30Z).
    expect(activeAt(m, ["2027-03-28T00:30:00Z", "2027-03-28T01:29:59Z", "2027-03-28T01:30:00Z", "2027-03-28T01:59:59Z", "2027-03-28T02:00:00Z"]))
      .toEqual(["2027-03-28T01:30:00Z", "2027-03-28T01:59:59Z"]);
    // 31 October: 02:30 happens twice; the first (CEST, 00:30Z) is the one.
    expect(activeAt(m, ["2027-10-31T00:29:59Z", "2027-10-31T00:30:00Z", "2027-10-31T00:59:59Z", "2027-10-31T01:30:00Z"]))
      .toEqual(["2027-10-31T00:30:00Z", "2027-10-31T00:59:59Z"]);
    // The days either side: 02:30 local as usual.
    expect(activeAt(m, ["2027-03-27T01:30:00Z", "2027-03-29T00:30:00Z", "2027-11-01T01:30:00Z"])).toEqual(["2027-03-27T01:30:00Z", "2027-03-29T00:30:00Z", "2027-11-01T01:30:00Z"]);
  });

  test("UNTIL is an instant, whatever the time zone", () => {
    // Daily at 18:00 Berlin (17:00Z in March) until 17:00Z on 10 March: the 10th's window is the last one.
    const m = mute({ rrule: "FREQ=DAILY;BYHOUR=18;UNTIL=20270310T170000Z", windowMinutes: 60 });
    expect(activeAt(m, ["2027-03-09T17:30:00Z", "2027-03-10T17:30:00Z", "2027-03-11T17:30:00Z"])).toEqual(["2027-03-09T17:30:00Z", "2027-03-10T17:30:00Z"]);
  });
});

describe("a bad rule is refused in the API's words", () => {
  const EXAMPLE = "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18";
  const cases: [string, RegExp][] = [
    ["FREQ=WEEKLY;BYDAY=XX", /^BYDAY must list days as MO, TU, WE, TH, FR, SA, SU/],
    ["FREQ=WEEKLY;BYDAY=SA,XX;BYHOUR=18", /^BYDAY must list days as MO, TU, WE, TH, FR, SA, SU/],
    ["FREQ=WEEKLY;FOO=1", /^FOO is not an RRULE part/],
    ["FREQ=WEEKLY;TZID=EUROPE", /^TZID is not taken: give time_zone instead/],
    ["FREQ=WEEKLY;WKST=XX", /^WKST must be one of MO/],
    ["FREQ=DAILY;COUNT=X", /^COUNT must be a whole number within/],
    ["FREQ=WEEKLY;BYDAY=SA;UNTIL=2", /^not a valid RRULE part: UNTIL=2/],
  ];
  test.each(cases)("%s: 422 validation_failed at rrule, with an example of a valid rule", async (rule, problem) => {
    const res = await gw.http.post("/api/mutes").set(a.auth).send({ topic: "x", rrule: rule, window_minutes: 30, time_zone: "Europe/Berlin" });
    expect([res.status, res.body.code, res.body.errors?.map((e: { path: string }) => e.path)]).toEqual([422, "validation_failed", ["rrule"]]);
    expect(res.body.errors[0].message).toMatch(problem);
    expect(res.body.errors[0].message).toContain(EXAMPLE);
    expect(JSON.stringify(res.body)).not.toMatch(/undefined|Cannot read|TypeError|is not a function|Unknown RRULE|Invalid /);
  });
});
