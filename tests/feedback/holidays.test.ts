// An account's holiday calendar: during one of its holidays the detector asks every topic for 1.5 x the evidence.
import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

const HOUR = 3600_000;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

/** 100 mentions an hour for a day, then 210 in the hour before `pass` (a `low` trend at the usual bar, not at 1.5 x). */
async function modestBurstBefore(accountId: string, pass: Date) {
  const last = Math.floor(pass.getTime() / HOUR) * HOUR - HOUR;
  await insertSignals(gw.deps.db, accountId, Array.from({ length: 25 }, (_, i) => signal({
    id: `gifts-${pass.getTime()}-${i}`, topic: "Gift cards", category: "retail", count: i === 24 ? 210 : 100, observed_at: new Date(last - (24 - i) * HOUR + 60_000).toISOString(),
  })));
}

test("the calendar names its holidays; unknown countries and regions name their field; it can be removed", async () => {
  const a = await gw.account();
  expect((await gw.http.get("/api/calendar").set(a.auth)).body).toMatchObject({ country: null, region: null, upcoming: [], now: null });
  const put = await gw.http.put("/api/calendar").set(a.auth).send({ country: "DE", region: "BY" });
  expect(put.status).toBe(200);
  expect(put.body).toMatchObject({ country: "DE", region: "BY", holiday_evidence: 1.5 });
  // The next ten, in order, none over (Bavaria's calendar has a holiday or observance every few weeks).
  expect(put.body.upcoming).toHaveLength(10);
  const ends = put.body.upcoming.map((h: { end: string }) => Date.parse(h.end));
  expect(ends.every((t: number) => t > Date.now())).toBe(true);
  expect([...ends].sort((x, y) => x - y)).toEqual(ends);
  expect(put.body.upcoming.every((h: { type: string }) => ["public", "bank", "observance"].includes(h.type))).toBe(true);

  const bad = await gw.http.put("/api/calendar").set(a.auth).send({ country: "XX" });
  expect([bad.status, bad.body.errors[0].path]).toEqual([422, "country"]);
  const badRegion = await gw.http.put("/api/calendar").set(a.auth).send({ country: "US", region: "ZZ" });
  expect([badRegion.status, badRegion.body.errors[0].path]).toEqual([422, "region"]);
  const shape = await gw.http.put("/api/calendar").set(a.auth).send({ country: "germany" });
  expect([shape.status, shape.body.errors[0].path]).toEqual([422, "country"]);
  expect((await gw.http.get("/api/calendar").set(a.auth)).body.country).toBe("DE");

  expect((await gw.http.delete("/api/calendar").set(a.auth)).status).toBe(204);
  expect((await gw.http.get("/api/calendar").set(a.auth)).body.country).toBeNull();
});

test("a modest burst on Thanksgiving alerts for an account without a US calendar, not for one with it; the same burst on a working day alerts for both", async () => {
  const thanksgiving = new Date("2026-11-26T18:02:00Z"); // 13:02 in New York
  const tuesday = new Date("2026-11-24T18:02:00Z");
  const plain = await gw.account();
  const us = await gw.account();
  expect((await gw.http.put("/api/calendar").set(us.auth).send({ country: "US" })).status).toBe(200);

  for (const a of [plain, us]) await modestBurstBefore(a.accountId, thanksgiving);
  expect((await detectAccount(gw.deps, plain.accountId, thanksgiving, options)).events).toBe(1);
  const held = await detectAccount(gw.deps, us.accountId, thanksgiving, options);
  expect(held).toMatchObject({ events: 0, holiday: "Thanksgiving Day" });

  const usOnTuesday = await gw.account();
  await gw.http.put("/api/calendar").set(usOnTuesday.auth).send({ country: "US" });
  await modestBurstBefore(usOnTuesday.accountId, tuesday);
  expect(await detectAccount(gw.deps, usOnTuesday.accountId, tuesday, options)).toMatchObject({ events: 1, holiday: null });
});
