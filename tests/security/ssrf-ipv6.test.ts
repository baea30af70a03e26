// IPv6 literals that carry an IPv4 address are judged by the IPv4 address they carry: a private, loopback or
// link-local one is refused wherever a user gives Trendgate a URL (webhooks, connector base URLs, the workflow push
// URL); a public one passes like the plain IPv4 address would. The guard is one function; it is tested directly,
// then through one route of each kind.
import { OutboundGuard } from "@trendgate/delivery";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

// [URL host, the form it is written in, the range it must be refused for]
const REFUSED: [string, string, string][] = [
  ["[::127.0.0.1]", "IPv4-compatible", "loopback"],
  ["[::10.0.0.1]", "IPv4-compatible", "private"],
  ["[::169.254.169.254]", "IPv4-compatible", "linkLocal"],
  ["[::7f00:1]", "IPv4-compatible, hex", "loopback"],
  ["[::ffff:127.0.0.1]", "IPv4-mapped", "loopback"],
  ["[::ffff:a9fe:a9fe]", "IPv4-mapped, hex", "linkLocal"],
  ["[::ffff:0:10.0.0.1]", "IPv4-translated", "private"],
  ["[64:ff9b::127.0.0.1]", "NAT64", "loopback"],
  ["[64:ff9b::192.168.1.1]", "NAT64", "private"],
  ["[64:ff9b:1::8.8.8.8]", "NAT64 local-use", "local-use"],
  ["[2002:7f00:1::]", "6to4", "loopback"],
  ["[2002:a9fe:a9fe::1]", "6to4", "linkLocal"],
  ["[2001:0:808:808::f5ff:fffe]", "Teredo, client 10.0.0.1", "private"],
  ["[2001:0:a00:1::f7f7:f7f7]", "Teredo, server 10.0.0.1", "private"],
  ["[::1]", "loopback", "loopback"],
  ["[::]", "unspecified", "unspecified"],
];
const PASSED: [string, string][] = [
  ["[::ffff:8.8.8.8]", "IPv4-mapped"],
  ["[::8.8.8.8]", "IPv4-compatible"],
  ["[64:ff9b::8.8.8.8]", "NAT64"],
  ["[2002:808:808::1]", "6to4"],
  ["[2606:4700:4700::1111]", "plain IPv6"],
];

describe("the guard judges an IPv6 address by the IPv4 address it carries", () => {
  const guard = new OutboundGuard([]);
  test.each(REFUSED)("%s (%s) is refused as %s", (host, _form, range) => {
    expect(() => guard.checkUrl(new URL(`http://${host}/x`))).toThrow(expect.objectContaining({ code: "ERR_BLOCKED_DESTINATION", range: expect.stringContaining(range) }));
  });
  test.each(PASSED)("%s (%s) carries a public address and passes", (host) => {
    expect(() => guard.checkUrl(new URL(`http://${host}/x`))).not.toThrow();
  });
  test("a host name resolving to an IPv4-compatible loopback is refused at connection time", async () => {
    const resolving = new OutboundGuard([], ((_h: string, _o: unknown, cb: any) => cb(null, [{ address: "::7f00:1", family: 6 }])) as never);
    const err = await new Promise((resolve) => resolving.lookup("evil.test", {}, (e: any) => resolve(e)));
    expect(err).toMatchObject({ code: "ERR_BLOCKED_DESTINATION", range: "loopback via ipv4Compatible" });
  });
  test("allow-listing 127.0.0.1 admits ::ffff:127.0.0.1 (the same socket) but not the other forms", () => {
    const allowing = new OutboundGuard(["127.0.0.1"]);
    expect(allowing.blockedRange("::ffff:127.0.0.1")).toBeNull();
    expect(allowing.blockedRange("::7f00:1")).toBe("loopback via ipv4Compatible");
    expect(allowing.blockedRange("64:ff9b::7f00:1")).toBe("loopback via nat64");
  });
});

describe("every URL a user gives is refused the same way", () => {
  let gw: TestGateway;
  let auth: { Authorization: string };
  beforeAll(async () => {
    gw = await startGateway({ OUTBOUND_ALLOWLIST: "127.0.0.1" });
    ({ auth } = await gw.account());
  });
  afterAll(async () => { await gw.close(); });

  const routes: [string, (url: string) => Promise<any>, string][] = [
    ["webhook url", (url) => gw.http.post("/api/integrations/webhooks").set(auth)
      .send({ url, trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0 }), "url"],
    ["connector base_url", (url) => gw.http.put("/api/integrations/social/youtube/connection").set(auth)
      .send({ credentials: { api_key: "k" }, terms: ["a"], base_url: url }), "base_url"],
    ["workflow api_base_url", (url) => gw.http.post("/api/integrations/workflow/connect").set(auth)
      .send({ api_key: "k", api_base_url: url }), "api_base_url"],
    ["workflow push_url", (url) => gw.http.put("/api/integrations/workflow/selection").set(auth)
      .send({ workflow_id: "w1", workflow_name: "W", api_base_url: "https://n8n.example.com", push_url: url }), "push_url"],
  ];
  const cases = routes.flatMap(([what, send, field]) =>
    REFUSED.filter(([, form]) => /compatible|NAT64$|6to4/.test(form)).map(([host, form]) => [what, host, form, send, field] as const));

  test.each(cases)("%s %s (%s): 422 blocked_destination naming the field", async (_what, host, _form, send, field) => {
    const res = await send(`http://${host}/hook`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ location: "body", path: field, code: "blocked_destination" })]);
  });
});
