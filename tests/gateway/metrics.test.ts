import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

test("/metrics needs the admin token and counts requests by route template and status", async () => {
  const { auth, keyId } = await gw.account();
  await gw.http.get(`/api/keys/${keyId}`).set(auth);
  await gw.http.get("/api/keys/key_missing").set(auth);
  expect((await gw.http.get("/metrics")).status).toBe(401);
  expect((await gw.http.get("/metrics").set(auth)).status).toBe(401); // an API key is not an operator credential
  const res = await gw.http.get("/metrics").set("Authorization", `Bearer ${gw.deps.config.ADMIN_TOKEN}`);
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toMatch(/text\/plain/);
  expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/api\/keys\/:id",status="200"\} 1/);
  expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/api\/keys\/:id",status="404"\} 1/);
  expect(res.text).toMatch(/http_request_duration_seconds_bucket\{le="0.05",method="GET",route="\/api\/keys\/:id"/);
});

test("logs carry no secrets", async () => {
  const { REDACT_PATHS } = await import("@trendgate/logger");
  const { pino } = await import("pino");
  const lines: string[] = [];
  const logger = pino({ redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, { write: (l: string) => lines.push(l) });
  logger.info({ req: { headers: { authorization: "Bearer tg_secret" } }, body: { api_key: "n8n-secret", secret: "whsec_x" } }, "x");
  expect(lines.join("")).not.toMatch(/tg_secret|n8n-secret|whsec_x/);
});
