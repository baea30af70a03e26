// Feedback on detections: "not a trend" / "useful" from the API, stored with who and when; a topic's detections judged
// not a trend raise its evidence bar (the detector then needs a stronger anomaly), and removing the feedback lowers it.
import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

const HOUR = 3600_000;
const lastCompleteBucket = () => new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

/**
 * A topic at a steady 100/h for a day, then 240 in the last complete hour: an anomaly score of about 6.2 (a day-old
 * topic, whose daily shape the model does not know yet), a `low` trend at the usual bar and at 1.3 (6.2 / 1.3 > 4.5),
 * under the threshold at 1.4 (6.2 / 1.4 < 4.5).
 */
async function modestBurst(accountId: string, topic: string) {
  const last = lastCompleteBucket().getTime();
  await insertSignals(gw.deps.db, accountId, Array.from({ length: 25 }, (_, i) => signal({
    id: `${topic}-${i}`, topic, category: "tech/gadgets", count: i === 24 ? 240 : 100, observed_at: new Date(last - (24 - i) * HOUR + 60_000).toISOString(),
  })));
}
const trendOf = (accountId: string, name: string) => gw.deps.db.trend.findFirst({ where: { accountId, name } });
const detectedEvents = (accountId: string) => gw.deps.db.trendEventRecord.count({ where: { accountId, type: "trend.detected" } });

test("a verdict is stored with who and when, one per caller per detection; bad input names the field; other accounts see nothing", async () => {
  const a = await gw.account();
  await modestBurst(a.accountId, "Foldable phones");
  await detectAccount(gw.deps, a.accountId, new Date(), options);
  const trend = (await trendOf(a.accountId, "Foldable phones"))!;
  expect(trend).toMatchObject({ status: "active", severity: "low" });
  const base = `/api/trends/${trend.id}/feedback`;

  const first = await gw.http.post(base).set(a.auth).send({ verdict: "not_a_trend", note: "a product page refresh" });
  expect(first.status).toBe(201);
  expect(first.headers.location).toBe(`${base}/${first.body.feedback.id}`);
  expect(first.body).toMatchObject({
    feedback: { trend_id: trend.id, detected_at: trend.detectedAt.toISOString(), verdict: "not_a_trend", note: "a product page refresh", actor: `key:${a.keyId}` },
    evidence_bar: 1.1,
  });
  // The same caller changing its mind replaces its verdict: the detection counts once, as useful now.
  const changed = await gw.http.post(base).set(a.auth).send({ verdict: "useful" });
  expect(changed.status).toBe(201);
  expect(changed.body).toMatchObject({ feedback: { id: first.body.feedback.id, verdict: "useful", note: null }, evidence_bar: 1 });
  const list = await gw.http.get(base).set(a.auth);
  expect(list.status).toBe(200);
  expect(list.body).toMatchObject({ data: [{ id: first.body.feedback.id, verdict: "useful" }], evidence_bar: 1 });

  const bad = await gw.http.post(base).set(a.auth).send({ verdict: "spam" });
  expect(bad.status).toBe(422);
  expect(bad.body.errors).toEqual([expect.objectContaining({ location: "body", path: "verdict" })]);
  const other = await gw.account();
  expect((await gw.http.post(base).set(other.auth).send({ verdict: "not_a_trend" })).status).toBe(404);
  expect((await gw.http.get(base).set(other.auth)).status).toBe(404);
  expect((await gw.http.delete(`${base}/${first.body.feedback.id}`).set(other.auth)).status).toBe(404);
  expect((await gw.http.get(base).set(a.auth)).body.data).toHaveLength(1);
});

test("detections judged not a trend raise the topic's bar until the same anomaly no longer alerts; removing the feedback brings it back", async () => {
  const a = await gw.account();
  await modestBurst(a.accountId, "Smart rings");
  await detectAccount(gw.deps, a.accountId, new Date(), options);
  const trend = (await trendOf(a.accountId, "Smart rings"))!;
  expect(await detectedEvents(a.accountId)).toBe(1);

  // Four detections of the topic judged not a trend (after the first: the trend ended and was detected again, a day apart).
  const base = `/api/trends/${trend.id}/feedback`;
  const bars: number[] = [];
  const verdicts: { id: string }[] = [];
  for (let day = 0; day < 4; day++) {
    await gw.deps.db.trend.update({ where: { id: trend.id }, data: { detectedAt: new Date(trend.detectedAt.getTime() + day * 24 * HOUR) } });
    const r = (await gw.http.post(base).set(a.auth).send({ verdict: "not_a_trend" })).body;
    bars.push(r.evidence_bar);
    verdicts.push(r.feedback);
  }
  expect(bars).toEqual([1.1, 1.2, 1.3, 1.4]);

  // The same burst, as if seen afresh (the trend ended long ago): at 1.4 x the thresholds it is not a trend.
  const fresh = async () => {
    await gw.deps.db.trend.update({ where: { id: trend.id }, data: { status: "ended", stage: "dormant" } });
    await gw.deps.db.trendEventRecord.deleteMany({ where: { accountId: a.accountId } });
    return detectAccount(gw.deps, a.accountId, new Date(), options);
  };
  const held = await fresh();
  expect(held.trends).toBe(0);
  expect(await detectedEvents(a.accountId)).toBe(0);
  expect((await trendOf(a.accountId, "Smart rings"))!.status).toBe("ended");

  // Undo one verdict: back to 1.3, and the burst alerts again.
  expect((await gw.http.delete(`${base}/${verdicts[3].id}`).set(a.auth)).status).toBe(204);
  expect((await gw.http.get(base).set(a.auth)).body.evidence_bar).toBe(1.3);
  expect((await fresh()).events).toBe(1);
  expect(await detectedEvents(a.accountId)).toBe(1);
  expect((await gw.http.delete(`${base}/${verdicts[3].id}`).set(a.auth)).status).toBe(404);
});

test("a detection judged useful cancels one judged not a trend; the bar never drops under 1 nor rises over 1.5", async () => {
  const a = await gw.account();
  await modestBurst(a.accountId, "E-bikes");
  await detectAccount(gw.deps, a.accountId, new Date(), options);
  const trend = (await trendOf(a.accountId, "E-bikes"))!;
  const base = `/api/trends/${trend.id}/feedback`;
  const judge = async (verdict: string, dayOffset: number) => {
    await gw.deps.db.trend.update({ where: { id: trend.id }, data: { detectedAt: new Date(trend.detectedAt.getTime() + dayOffset * 24 * HOUR) } });
    return (await gw.http.post(base).set(a.auth).send({ verdict })).body.evidence_bar as number;
  };
  expect(await judge("useful", 0)).toBe(1);
  expect(await judge("not_a_trend", 1)).toBe(1);
  expect(await judge("not_a_trend", 2)).toBe(1.1);
  for (const day of [3, 4, 5, 6, 7, 8, 9]) await judge("not_a_trend", day);
  expect((await gw.http.get(base).set(a.auth)).body.evidence_bar).toBe(1.5);
});
