import crypto from "node:crypto";
import { loadConfig, type Config } from "@trendgate/config";

/** The test environment (set by `npm test`) plus a queue prefix of this test's own, so test files never share jobs. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...process.env, QUEUE_PREFIX: `t${crypto.randomBytes(4).toString("hex")}`, ...overrides });
}

export const waitFor = async <T>(fn: () => Promise<T | undefined | null | false>, { timeoutMs = 10_000, everyMs = 50 } = {}): Promise<T> => {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
};
