import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
let auth: { Authorization: string };
beforeAll(async () => {
  gw = await startGateway({ BODY_LIMIT_BYTES: "2048" });
  auth = (await gw.account()).auth;
});
afterAll(async () => { await gw.close(); });

const isProblem = (res: any, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, type: `https://trendgate.dev/problems/${code}` });
  expect(res.body.request_id).toBe(res.headers["x-request-id"]);
};

describe("problem details for every error", () => {
  test("malformed JSON: 400 malformed_json", async () => {
    const res = await gw.http.post("/api/signals").set(auth).set("Content-Type", "application/json").send('{"signals": [');
    isProblem(res, 400, "malformed_json");
  });

  test("wrong content type: 415", async () => {
    const res = await gw.http.post("/api/signals").set(auth).set("Content-Type", "text/plain").send("signals=1");
    isProblem(res, 415, "unsupported_media_type");
  });

  test("body over the limit: 413", async () => {
    const res = await gw.http.post("/api/signals").set(auth).send({ signals: [signal({ topic: "x".repeat(3000) })] });
    isProblem(res, 413, "payload_too_large");
  });

  test("validation: 422 listing every offending field with its path", async () => {
    const res = await gw.http.post("/api/keys").set(auth).send({ name: "", expires_at: "tomorrow", extra: 1 });
    isProblem(res, 422, "validation_failed");
    const paths = res.body.errors.map((e: any) => `${e.location}:${e.path}`).sort();
    expect(paths).toEqual(["body:(body)", "body:expires_at", "body:name"]); // (body): the unknown key `extra`
    expect(res.body.errors.find((e: any) => e.path === "(body)").message).toMatch(/extra/);
  });

  test("query validation: 422 naming the parameter", async () => {
    const res = await gw.http.get("/api/keys?limit=5000").set(auth);
    isProblem(res, 422, "validation_failed");
    expect(res.body.errors).toEqual([expect.objectContaining({ location: "query", path: "limit", code: "too_big" })]);
  });

  test("unknown route: 404 route_not_found; known route, wrong method: 405 with Allow", async () => {
    isProblem(await gw.http.get("/api/nothing-here").set(auth), 404, "route_not_found");
    const res = await gw.http.put("/api/keys").set(auth).send({});
    isProblem(res, 405, "method_not_allowed");
    expect(res.headers.allow).toBe("GET, HEAD, POST");
  });

  test("X-Request-Id is echoed when given and generated when not", async () => {
    const given = await gw.http.get("/status").set("X-Request-Id", "trace-abc.123");
    expect(given.headers["x-request-id"]).toBe("trace-abc.123");
    const made = await gw.http.get("/status").set("X-Request-Id", "bad id with spaces");
    expect(made.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{32}$/);
  });

  test("signals: invalid items are rejected one by one with reasons; valid ones are accepted", async () => {
    const res = await gw.http.post("/api/signals").set(auth).send({ signals: [signal(), signal({ category: "Tech AI", count: -1 })] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 1, rejected: 1 });
    expect(res.body.rejections[0].index).toBe(1);
    expect(res.body.rejections[0].errors.map((e: any) => e.path).sort()).toEqual(["category", "count"]);
  });
});
