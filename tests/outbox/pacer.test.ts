import crypto from "node:crypto";
import { createRedis } from "@trendgate/queues";
import { Pacer } from "@trendgate/delivery";

// The pacer gives each waiting message its own slot: a backlog on one lane is spread one interval apart, a message
// asking again before its slot is told to wait for the rest of it, and lanes do not hold each other up.

const redis = createRedis(process.env.REDIS_URL!, "worker");
afterAll(() => redis.disconnect());

test("a backlog on one lane gets one slot each, an interval apart; other lanes are free", async () => {
  const pacer = new Pacer(redis, `t${crypto.randomBytes(4).toString("hex")}`, 1000);
  const waits = [];
  for (let i = 0; i < 5; i++) waits.push(await pacer.reserve("chat:c1:C1", `m${i}`));
  expect(waits[0]).toBe(0); // the first goes now
  for (let i = 1; i < 5; i++) {
    // Each later message waits about one interval more than the one before (minus the time the calls took).
    expect(waits[i]).toBeGreaterThan(i * 1000 - 200);
    expect(waits[i]).toBeLessThanOrEqual(i * 1000);
  }
  // Asking again early keeps the same slot (no second reservation that would push everyone back).
  const again = await pacer.reserve("chat:c1:C1", "m4");
  expect(again).toBeLessThanOrEqual(waits[4]);
  expect(again).toBeGreaterThan(waits[3] - 200);
  expect(await pacer.reserve("chat:c1:C2", "other")).toBe(0);
});

test("a message whose slot has come goes, once", async () => {
  const pacer = new Pacer(redis, `t${crypto.randomBytes(4).toString("hex")}`, 150);
  expect(await pacer.reserve("lane", "a")).toBe(0);
  const wait = await pacer.reserve("lane", "b");
  expect(wait).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, wait + 20));
  expect(await pacer.reserve("lane", "b")).toBe(0); // its ticket: go
  expect(await pacer.reserve("lane", "c")).toBeGreaterThan(0); // the next one waits for the slot after b's
});
