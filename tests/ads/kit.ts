import { newId, saveAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import type { TestGateway } from "../helpers/gateway.ts";
import type { GoogleAdsServer } from "../peers/google-ads-server.ts";

// Shared setup of the ads tests: an account connected to the local Google Ads API (the token stored as the OAuth
// flow stores it), and trends as the detector leaves them.

export async function googleConnected(gw: TestGateway, google: GoogleAdsServer) {
  const a = await gw.account();
  const token = `tok-${a.accountId}`;
  const customer = google.addCustomer();
  google.addToken(token, { customers: [customer.id] });
  await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "google_ads", kind: "ads", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: token, tokenType: "bearer" }),
    tokenExpiresAt: new Date(Date.now() + 3600_000), scopes: ["https://www.googleapis.com/auth/adwords"], externalAccount: {},
  }));
  return { ...a, customer, token };
}

/** An active, rising, high-severity trend in tech/ai unless `over` says otherwise. */
export async function addTrend(gw: TestGateway, accountId: string, name: string, over: Record<string, unknown> = {}) {
  const topic = await gw.deps.db.topic.create({ data: { id: newId("top"), accountId, key: `${name}|tech/ai`, name, category: "tech/ai" } });
  await gw.deps.db.trend.create({ data: {
    id: newId("trd"), accountId, topicId: topic.id, name, category: "tech/ai", status: "active", severity: "high", stage: "rising", velocity: 50, acceleration: 1,
    baseline: 10, current: 60, anomalyScore: 5, peakVelocity: 50, publishedVelocity: 50, sentiment: 0.2, detectedAt: new Date(), bucketStart: new Date(), ...over,
  } });
}
