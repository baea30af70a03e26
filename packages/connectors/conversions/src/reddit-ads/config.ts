import type { ProviderEnv } from "@trendgate/connector-core";
import { env } from "./manifest.ts";

// Reddit Ads' settings from the environment (the variables ./manifest.ts names), like provider-config.ts reads the
// OAuth client: from PROVIDER_ENV, never from a request.

export const TEST_ID_PLACEMENTS = ["body", "query"] as const;
export type TestIdPlacement = (typeof TEST_ID_PLACEMENTS)[number];

/** Where a test event's `test_id` is sent (`body` unless set); an unknown value is a configuration error, said at once. */
export function testIdPlacementOf(e: ProviderEnv): TestIdPlacement {
  const v = e[env.testIdPlacement];
  if (v === undefined || v === "") return "body";
  if ((TEST_ID_PLACEMENTS as readonly string[]).includes(v)) return v as TestIdPlacement;
  throw new Error(`${env.testIdPlacement} must be ${TEST_ID_PLACEMENTS.join(" or ")}, not ${JSON.stringify(v)}`);
}
