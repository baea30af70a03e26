// Why a topic is trending: the terms that co-occur with it more than usual, where its mentions come from against
// where they usually do, the posts that weigh most and the sentiment shift, read from the stored signals; shown by
// GET /api/trends/{id}, the new trend's summary (hence its chat card) and the briefing page.
import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, driversOf, driversText, type DriverSignal, type EngineOptions } from "@trendgate/trends";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

const HOUR = 3600_000;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const USUAL = ["Rooftop solar panels cut my bill", "Solar panels installation cost this year", "Are solar panels worth it for a small roof?", "New solar panels efficiency record"];
const post = (o: Partial<DriverSignal>): DriverSignal => ({ source: "x", count: 25, sentiment: 0.3, text: USUAL[0], link: null, observedAt: new Date(0), ...o });

test("the planted co-occurring term leads the drivers; the topic's own words and common words never count", () => {
  const baseline = Array.from({ length: 96 }, (_, i) => post({ text: USUAL[i % 4], sentiment: 0.4 }));
  const recent = [
    ...Array.from({ length: 9 }, (_, i) => post({ source: "reddit", count: 35, sentiment: -0.4, text: `Solar panels failing in the #heatwave, grid outage ${i}` })),
    ...Array.from({ length: 3 }, () => post({ count: 35, text: USUAL[1] })),
  ];
  const d = driversOf("Solar panels", recent, baseline);
  expect(d.terms[0].term).toMatch(/^(#heatwave|failing|grid|outage)$/);
  expect(d.terms.map((t) => t.term)).toEqual(expect.arrayContaining(["#heatwave", "grid", "outage", "failing"]));
  expect(d.terms.every((t) => !["solar", "panels", "the", "in"].includes(t.term))).toBe(true);
  expect(d.terms.find((t) => t.term === "#heatwave")).toMatchObject({ posts: 9 });
  expect(d.sources[0]).toEqual({ source: "reddit", share: 0.75, usual_share: 0 });
  expect(d.sentiment).toEqual({ now: -0.22, usual: 0.4, shift: -0.62 }); // (9 x -0.4 + 3 x 0.3) / 12, count-weighted
  expect(d.top_posts).toHaveLength(3);
  expect(driversText(d)).toMatch(/^Why: with "[^"]+" \(\d+(\.\d)?x usual\).*; 75% from reddit \(usually 0%\); sentiment down 0\.6\.$/);
  // Nothing unusual: no terms, no text.
  expect(driversOf("Solar panels", baseline.slice(0, 8), baseline).terms).toEqual([]);
});

test("a burst's drivers reach the API and the new trend's summary", async () => {
  const a = await gw.account();
  const last = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const signals = [];
  for (let h = 0; h < 24; h++) {
    for (let k = 0; k < 4; k++) {
      signals.push(signal({ id: `usual-${h}-${k}`, source: "x", topic: "Solar panels", category: "energy", count: 25, sentiment: 0.4, text: USUAL[(h + k) % 4],
        observed_at: new Date(last - (24 - h) * HOUR + (k + 1) * 60_000).toISOString() }));
    }
  }
  for (let k = 0; k < 12; k++) {
    signals.push(signal({ id: `burst-${k}`, source: k < 9 ? "reddit" : "x", topic: "Solar panels", category: "energy", count: 35, sentiment: -0.4,
      text: k < 9 ? `Solar panels failing in the #heatwave, grid outage again (${k})` : USUAL[k % 4], link: `https://www.reddit.com/r/solar/comments/${k}/`,
      observed_at: new Date(last + (k + 1) * 60_000).toISOString() }));
  }
  await insertSignals(gw.deps.db, a.accountId, signals);
  expect((await detectAccount(gw.deps, a.accountId, new Date(), options)).events).toBe(1);
  const [event] = (await gw.deps.db.trendEventRecord.findMany({ where: { accountId: a.accountId } })).map((e) => e.payload as { summary: string; trend_id: string });
  expect(event.summary).toMatch(/Why: with "(#heatwave|grid|outage|failing)"/);
  expect(event.summary).toMatch(/from reddit \(usually 0%\)/);

  const res = await gw.http.get(`/api/trends/${event.trend_id}`).set(a.auth);
  expect(res.status).toBe(200);
  expect(res.body.drivers.terms.map((t: { term: string }) => t.term)).toContain("#heatwave");
  expect(res.body.drivers.sources[0]).toMatchObject({ source: "reddit", usual_share: 0 });
  expect(res.body.drivers.sentiment.shift).toBeLessThan(-0.3);
  expect(res.body.drivers.top_posts.map((p: { count: number }) => p.count)).toEqual([35, 35, 35]);
});
