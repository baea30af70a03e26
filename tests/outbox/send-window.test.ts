import crypto from "node:crypto";
import { createRedis } from "@trendgate/queues";
import { SendWindow } from "@trendgate/delivery";

// The send window behind a webhook subscription's rate_limit: a send holds a unit until a window after its answer,
// waiters are served in the order they first asked, and a lost send or waiter does not stall the lane for good.

const redis = createRedis(process.env.REDIS_URL!, "worker");
afterAll(() => redis.disconnect());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const window = (over: Partial<{ windowMs: number; holdMs: number; graceMs: number }> = {}) =>
  new SendWindow(redis, `t${crypto.randomBytes(4).toString("hex")}`, { windowMs: 300, holdMs: 5000, graceMs: 5000, ...over });

test("two units: a third send waits until a window after an answer, and waiters go in the order they first asked", async () => {
  const w = window();
  expect(await w.acquire("lane", "a", 2)).toBe(0);
  expect(await w.acquire("lane", "b", 2)).toBe(0);
  const c = await w.acquire("lane", "c", 2);
  const d = await w.acquire("lane", "d", 2);
  expect(c).toBeGreaterThan(0);
  expect(d).toBeGreaterThan(0);
  expect(await w.acquire("other", "x", 2)).toBe(0); // lanes are apart
  await w.release("lane", "a");
  expect(await w.acquire("lane", "c", 2)).toBeGreaterThan(0); // a's unit frees a window after its answer, not at it
  await sleep(350);
  expect(await w.acquire("lane", "d", 2)).toBeGreaterThan(0); // one unit free, and c asked first
  expect(await w.acquire("lane", "c", 2)).toBe(0);
  expect(await w.acquire("lane", "d", 2)).toBeGreaterThan(0); // b is still out
  await w.release("lane", "b");
  await sleep(350);
  expect(await w.acquire("lane", "d", 2)).toBe(0);
});

test("a send never reported done frees its unit after the hold; a waiter that never comes back loses its place after the grace", async () => {
  const w = window({ holdMs: 400, graceMs: 200 });
  expect(await w.acquire("lane", "lost-send", 1)).toBe(0);
  const gone = await w.acquire("lane", "lost-waiter", 1); // first in line, then its job is gone
  expect(gone).toBeGreaterThan(0);
  expect(await w.acquire("lane", "next", 1)).toBeGreaterThan(0);
  await sleep(450 + gone + 200); // the hold is over, and the lost waiter's turn and grace with it
  expect(await w.acquire("lane", "next", 1)).toBe(0);
});
