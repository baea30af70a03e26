import dns from "node:dns";
import { OutboundClient, OutboundGuard } from "@trendgate/delivery";
import { waitFor } from "../helpers/config.ts";
import { startGateway } from "../helpers/gateway.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, type Stack } from "../helpers/stack.ts";

const client = (guard: OutboundGuard) =>
  new OutboundClient({ guard, connectTimeoutMs: 500, timeoutMs: 1000, maxResponseBytes: 1024, userAgent: "test" });

/** A resolver answering like a hostile DNS server would. */
const fakeDns = (answers: Record<string, string>): typeof dns.lookup =>
  ((host: string, _opts: unknown, cb: (e: Error | null, a?: dns.LookupAddress[]) => void) => {
    const address = answers[host];
    if (!address) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" }));
    cb(null, [{ address, family: address.includes(":") ? 6 : 4 }]);
  }) as never;

let rx: Receiver;
beforeAll(async () => { rx = await startReceiver(() => ({ status: 200, body: "reached" })); });
afterAll(async () => { await rx.close(); });

describe("outbound guard (allow-list off)", () => {
  const guard = new OutboundGuard([]);
  test.each([
    ["http://10.0.0.1/x", "private"],
    ["http://169.254.169.254/latest/meta-data/", "linkLocal"],
    ["http://[::1]/x", "loopback"],
    ["http://127.0.0.1/x", "loopback"],
    ["http://[::ffff:127.0.0.1]/x", "loopback"],
    ["http://192.168.1.10/x", "private"],
    ["http://100.64.0.1/x", "carrierGradeNat"],
    ["http://[fd00:ec2::254]/x", "uniqueLocal"],
    ["http://0.0.0.0/x", "unspecified"],
  ])("%s is refused before connecting (%s)", async (url, range) => {
    const r = await client(guard).request("POST", url, { body: "{}" });
    expect(r.status).toBeNull();
    expect(r.error).toMatchObject({ code: "ERR_BLOCKED_DESTINATION" });
    expect(r.error!.message).toContain(range);
  });

  test("a host name that resolves to 127.0.0.1 is refused at connection time, and nothing is sent", async () => {
    const before = rx.received.length;
    const r = await client(guard).request("POST", `http://localhost:${rx.port}/x`, { body: "{}" });
    expect(r.error).toMatchObject({ code: "ERR_BLOCKED_DESTINATION" });
    expect(rx.received.length).toBe(before);
  });

  test("DNS rebinding: the resolved address is checked on every connection, not the name", async () => {
    const answers: Record<string, string> = { "rebind.test": "93.184.216.34" };
    const rebinding = new OutboundGuard([], fakeDns(answers));
    const first = await new Promise((resolve) => rebinding.lookup("rebind.test", {}, (err: any, addr: any) => resolve(err ?? addr)));
    expect(first).toBe("93.184.216.34");
    answers["rebind.test"] = "127.0.0.1"; // the attacker's DNS now points at us
    const r = await client(rebinding).request("POST", `http://rebind.test:${rx.port}/x`, { body: "{}" });
    expect(r.error).toMatchObject({ code: "ERR_BLOCKED_DESTINATION" });
  });

  test("the allow-list admits named hosts and CIDRs", async () => {
    const byCidr = await client(new OutboundGuard(["127.0.0.0/8"])).request("POST", `http://127.0.0.1:${rx.port}/x`, { body: "{}" });
    expect(byCidr.status).toBe(200);
    const byName = await client(new OutboundGuard(["localhost"])).request("POST", `http://localhost:${rx.port}/x`, { body: "{}" });
    expect(byName.status).toBe(200);
    expect(byName.body).toBe("reached");
  });

  test("redirects are not followed", async () => {
    const redirecting = await startReceiver(() => ({ status: 302, headers: { Location: "http://169.254.169.254/" } }));
    const r = await client(new OutboundGuard(["127.0.0.1"])).request("POST", redirecting.url(), { body: "{}" });
    expect(r.status).toBe(302);
    await redirecting.close();
  });
});

describe("webhook deliveries with the allow-list off", () => {
  let stack: Stack;
  beforeAll(async () => { stack = await startStack({ OUTBOUND_ALLOWLIST: "" }); });
  afterAll(async () => { await stack.close(); });

  test("a subscription whose host resolves to loopback gets a blocked_destination execution and no retry", async () => {
    const a = await stack.gw.account();
    const created = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth).send({
      url: `http://localhost:${rx.port}/ssrf`, trigger_type: "trend_velocity", delivery_mode: "instant_stream", threshold_value: 1, cooldown_seconds: 0,
    });
    expect(created.status).toBe(201); // a name: checked when connecting, not at creation
    await stack.gw.http.post(`/api/integrations/webhooks/${created.body.id}/test`).set(a.auth);
    const ex = await waitFor(async () => {
      const body = (await stack.gw.http.get(`/api/integrations/webhooks/${created.body.id}/executions`).set(a.auth)).body;
      return body.data.length > 0 && body.data;
    });
    expect(ex[0]).toMatchObject({ outcome: "failed", error_class: "blocked_destination", response_status: null, next_retry_at: null });
    expect(rx.on("/ssrf")).toHaveLength(0);
  });

  test("without the allow-list, 127.0.0.1 cannot even be subscribed", async () => {
    const gw = await startGateway({ OUTBOUND_ALLOWLIST: "" });
    const a = await gw.account();
    const res = await gw.http.post("/api/integrations/webhooks").set(a.auth).send({
      url: `http://127.0.0.1:${rx.port}/x`, trigger_type: "trend_velocity", delivery_mode: "instant_stream", threshold_value: 1, cooldown_seconds: 0,
    });
    expect(res.status).toBe(422);
    await gw.close();
  });
});
