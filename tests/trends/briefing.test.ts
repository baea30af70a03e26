// Trend briefings: the page a trend event's source_link opens without an API key, behind a signed,
// expiring, per-account revocable token. Real gateway, Postgres and Redis; the page is also rendered in headless
// Chromium (tests/helpers/browser.ts finds one).
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { loadConfig } from "@trendgate/config";
import { insertSignals, newId } from "@trendgate/db";
import { BRIEFING_PAGE_HEADERS, briefingLinkKey, briefingToken, briefingUrl, verifyBriefingToken } from "@trendgate/trends";
import { testBrowser } from "../helpers/browser.ts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

const HOUR = 3600_000;
const browser = await testBrowser();
const HTML = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" }; // what a browser sends
const PAGE_TAGS = "html head meta title style body header p h1 h2 span section dl dt dd time figure svg line text polyline circle figcaption ol ul li a br footer code h3 strong".split(" ");
const HOSTILE = `<script>alert("pwned")</script> "quoted" & 'single' </title><img src=x onerror=alert(1)>`;

let gw: TestGateway;
let key: Buffer;
const lastCompleteBucket = () => new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR);

/** A topic with 24 flat hours and a burst in the last complete hour (signals with links), and its trend row. */
async function seedTrend(accountId: string, name: string, o: { links?: (string | undefined)[] } = {}) {
  const last = lastCompleteBucket().getTime();
  const links = o.links ?? [`https://news.example/${encodeURIComponent(name)}/1`, `https://social.example/p/2?a=1&b=2`];
  const signals = Array.from({ length: 25 }, (_, i) => signal({
    id: `${name}-${i}`, topic: name, category: "tech/ai", count: i === 24 ? 400 : 100, sentiment: 0.6,
    observed_at: new Date(last - (24 - i) * HOUR + 60_000).toISOString(),
  }));
  const linked = links.map((link, i) => signal({ id: `${name}-l${i}`, topic: name, category: "tech/ai", count: 5 + i, link, observed_at: new Date(last + 120_000 + i * 1000).toISOString() }));
  await insertSignals(gw.deps.db, accountId, [...signals, ...linked]);
  const topic = await gw.deps.db.topic.findFirstOrThrow({ where: { accountId, name } });
  return gw.deps.db.trend.create({
    data: {
      id: newId("trend"), accountId, topicId: topic.id, name, category: "tech/ai", status: "active", severity: "high", stage: "rising",
      velocity: 305, acceleration: 290, baseline: 100, current: 410, anomalyScore: 14.2, peakVelocity: 305, publishedVelocity: 305,
      sentiment: 0.6, detectedAt: lastCompleteBucket(), bucketStart: lastCompleteBucket(),
    },
  });
}

const pathOf = (url: string) => new URL(url).pathname;
const linkFor = (accountId: string, trendId: string, over: { issuedAt?: Date; ttlSeconds?: number } = {}) =>
  pathOf(briefingUrl("https://tg.example/", key, { accountId, trendId, issuedAt: over.issuedAt ?? new Date(), ttlSeconds: over.ttlSeconds ?? 3600 }));

beforeAll(async () => {
  gw = await startGateway();
  key = briefingLinkKey(gw.deps.config.ENCRYPTION_KEY);
});
afterAll(async () => { await gw.close(); });

describe("briefing tokens", () => {
  const claims = { accountId: "acct_01kaq3m2b4c5d6e7f8g9h0jkmn", trendId: "trend_01kaq3m2b4c5d6e7f8g9h0jkmp", issuedAt: new Date("2026-11-24T00:00:00.123Z"), ttlSeconds: 600 };

  test("a token verifies with its key until it expires, and names what it was issued for", () => {
    const url = briefingUrl("https://tg.example/base/", key, claims);
    expect(url).toMatch(/^https:\/\/tg\.example\/base\/briefings\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(url.length).toBeLessThan(260);
    const token = url.split("/").pop()!;
    expect(verifyBriefingToken(key, token, new Date("2026-11-24T00:09:59Z"))).toEqual({
      ok: true, accountId: claims.accountId, trendId: claims.trendId, issuedAt: claims.issuedAt, expiresAt: new Date("2026-11-24T00:10:00.123Z"),
    });
    expect(verifyBriefingToken(key, token, new Date("2026-11-24T00:10:00.123Z"))).toEqual({ ok: false, reason: "expired" });
  });

  test("another key, a changed payload or signature, and garbage are refused with a typed reason", () => {
    const token = briefingToken(key, claims);
    const [payload, mac] = token.split(".");
    const now = new Date("2026-11-24T00:01:00Z");
    expect(verifyBriefingToken(briefingLinkKey(Buffer.alloc(32, 9).toString("base64")), token, now)).toEqual({ ok: false, reason: "bad_signature" });
    const forged = Buffer.from(JSON.stringify([1, claims.accountId, "trend_01kaq3m2b4c5d6e7f8g9h0jkmq", claims.issuedAt.getTime(), claims.issuedAt.getTime() + 600_000])).toString("base64url");
    expect(verifyBriefingToken(key, `${forged}.${mac}`, now)).toEqual({ ok: false, reason: "bad_signature" });
    // Every spelling of the signature's last character but the issued one is refused (no base64 slack).
    const last = mac.at(-1)!;
    for (const c of "AEIMQUYcgkosw048".replace(last, "")) expect(verifyBriefingToken(key, `${payload}.${mac.slice(0, -1)}${c}`, now).ok).toBe(false);
    for (const bad of ["", ".", "abc", `${payload}.`, `${payload}.${mac}.x`, `${payload}.${mac}=`, "x".repeat(600), `${payload}%.${mac}`])
      expect(verifyBriefingToken(key, bad, now)).toEqual({ ok: false, reason: "malformed" });
  });

  test("BRIEFING_LINK_TTL_SECONDS: 7 days by default, 5 minutes to 90 days", () => {
    const env = { ADMIN_TOKEN: "x".repeat(24), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") };
    expect(loadConfig(env).BRIEFING_LINK_TTL_SECONDS).toBe(7 * 86_400);
    expect(loadConfig({ ...env, BRIEFING_LINK_TTL_SECONDS: "300" }).BRIEFING_LINK_TTL_SECONDS).toBe(300);
    for (const bad of ["299", "7776001", "1.5", "week"]) expect(() => loadConfig({ ...env, BRIEFING_LINK_TTL_SECONDS: bad })).toThrow(/BRIEFING_LINK_TTL_SECONDS/);
  });

  test("the key is derived from ENCRYPTION_KEY: stable, 32 bytes, not the key itself", () => {
    const k = gw.deps.config.ENCRYPTION_KEY;
    expect(briefingLinkKey(k).equals(key)).toBe(true);
    expect(key.length).toBe(32);
    expect(key.equals(Buffer.from(k, "base64"))).toBe(false);
    expect(() => briefingLinkKey("c2hvcnQ=")).toThrow(/32 bytes/);
  });
});

describe("GET /briefings/{token}", () => {
  let a: Awaited<ReturnType<TestGateway["account"]>>;
  let b: Awaited<ReturnType<TestGateway["account"]>>;
  let trendA: { id: string };
  let trendB: { id: string };
  beforeAll(async () => {
    [a, b] = [await gw.account(), await gw.account()];
    trendA = await seedTrend(a.accountId, "AI agents");
    trendB = await seedTrend(b.accountId, "Secret launch of B", { links: ["https://b-only.example/leak"] });
  });

  test("a link opens the trend's page without an API key, with strict headers", async () => {
    const res = await gw.http.get(linkFor(a.accountId, trendA.id)).set(HTML);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    const csp = res.headers["content-security-policy"];
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toMatch(/script-src|unsafe-inline|unsafe-eval/);
    expect(res.headers).toMatchObject({
      "x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "cache-control": "private, no-store", "x-frame-options": "DENY",
    });
    expect(res.headers["x-robots-tag"]).toMatch(/noindex/);
    expect(res.headers["x-ratelimit-limit"]).toBeDefined(); // counted per client address
    const html = res.text;
    expect(html).not.toMatch(/<script/i);
    for (const s of ["<h1>AI agents</h1>", "tech/ai", "severity high", "stage rising", "410 mentions/h", "100 mentions/h", "4.1×",
      "+305 mentions/h above the expected rate", "+290 mentions/h", "Positive (0.60", "Recommended next steps", "Brief the content team on tech/ai",
      `/api/trends/${trendA.id}`, "<svg", "<polyline"]) expect(html).toContain(s);
    expect(html).toMatch(/Detected<\/dt><dd><time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
    expect(html).toMatch(/Generated <time datetime="([^"]+)">/);
    // Example posts: newest first, plain anchors, no Referer, no follow.
    const anchors = [...html.matchAll(/<a href="([^"]+)" rel="([^"]+)">/g)];
    expect(anchors.map((m) => m[1])).toEqual(["https://social.example/p/2?a=1&amp;b=2", "https://news.example/AI%20agents/1"]);
    expect(new Set(anchors.map((m) => m[2]))).toEqual(new Set(["noopener noreferrer nofollow"]));
  });

  test("the JSON of the trend stays at /api/trends/{id}, for API keys only", async () => {
    expect((await gw.http.get(`/api/trends/${trendA.id}`)).status).toBe(401);
    const res = await gw.http.get(`/api/trends/${trendA.id}`).set(a.auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: trendA.id, name: "AI agents" });
  });

  test("an expired link shows nothing: 410 page for browsers, link_expired problem for others", async () => {
    const path = linkFor(a.accountId, trendA.id, { issuedAt: new Date(Date.now() - 601_000), ttlSeconds: 600 });
    const page = await gw.http.get(path).set(HTML);
    expect(page.status).toBe(410);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("private, no-store");
    expect(page.text).toContain("expired");
    expect(page.text).not.toContain("AI agents");
    const problem = await gw.http.get(path);
    expect(problem.status).toBe(410);
    expect(problem.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(problem.body).toMatchObject({ status: 410, code: "link_expired" });
    expect(problem.headers["referrer-policy"]).toBe("no-referrer");
  });

  test("tampered and malformed links are 404, told apart from nothing", async () => {
    const good = linkFor(a.accountId, trendA.id);
    const [payload, mac] = good.split("/").pop()!.split(".");
    const otherPayload = Buffer.from(JSON.stringify([1, a.accountId, trendB.id, Date.now(), Date.now() + 3600_000])).toString("base64url");
    const flipped = mac.slice(0, 5) + (mac[5] === "A" ? "B" : "A") + mac.slice(6);
    const bodies = new Set<string>();
    for (const path of [`/briefings/${otherPayload}.${mac}`, `/briefings/${payload}.${flipped}`, `/briefings/${payload}`, "/briefings/x", "/briefings/%00", `/briefings/${"a".repeat(3000)}`]) {
      const res = await gw.http.get(path).set(HTML);
      expect([path.slice(0, 60), res.status]).toEqual([path.slice(0, 60), 404]);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      bodies.add(res.text);
      const problem = await gw.http.get(path);
      expect(problem.status).toBe(404);
      expect(problem.body.code).toBe("not_found");
    }
    expect(bodies.size).toBe(1); // the same page whatever was wrong
  });

  test("a link signed for account A never shows B's trend, whichever ids are swapped", async () => {
    const paths = [linkFor(a.accountId, trendB.id), linkFor(b.accountId, trendA.id)];
    const notFound = (await gw.http.get("/briefings/x").set(HTML)).text;
    for (const path of paths) {
      const res = await gw.http.get(path).set(HTML);
      expect(res.status).toBe(404);
      expect(res.text).toBe(notFound); // nothing of either trend: the unknown-link page, byte for byte
      expect(res.text).not.toMatch(/Secret launch|b-only|AI agents/);
    }
    expect((await gw.http.get(linkFor(b.accountId, trendB.id)).set(HTML)).text).toContain("Secret launch of B");
  });

  test("revocation ends the account's links issued before it; links issued after it work; other accounts are untouched", async () => {
    const c = await gw.account();
    const trend = await seedTrend(c.accountId, "Revocable topic");
    const before = linkFor(c.accountId, trend.id);
    const otherAccount = linkFor(a.accountId, trendA.id);
    expect((await gw.http.get(before).set(HTML)).status).toBe(200);

    expect((await gw.http.post("/api/briefings/revoke")).status).toBe(401);
    const revoked = await gw.http.post("/api/briefings/revoke").set(c.auth);
    expect(revoked.status).toBe(200);
    const at = new Date(revoked.body.revoked_before);
    expect(Math.abs(at.getTime() - Date.now())).toBeLessThan(5000);
    expect((await gw.deps.db.account.findUniqueOrThrow({ where: { id: c.accountId } })).briefingLinksRevokedBefore).toEqual(at);

    const old = await gw.http.get(before).set(HTML);
    expect(old.status).toBe(404);
    expect(old.text).not.toContain("Revocable topic");
    expect((await gw.http.get(before)).body.code).toBe("not_found");
    // A link issued 1 ms after the revocation instant works (tokens carry milliseconds).
    expect((await gw.http.get(linkFor(c.accountId, trend.id, { issuedAt: new Date(at.getTime() + 1) })).set(HTML)).status).toBe(200);
    expect((await gw.http.get(linkFor(c.accountId, trend.id, { issuedAt: new Date(at.getTime() - 1) })).set(HTML)).status).toBe(404);
    expect((await gw.http.get(otherAccount).set(HTML)).status).toBe(200);
  });

  test("hostile topic names, sources and links are escaped; only http(s) links are rendered", async () => {
    const h = await gw.account();
    const trend = await seedTrend(h.accountId, HOSTILE, { links: ["javascript:alert(1)", "https://ok.example/x?q=\"><script>alert(2)</script>", "data:text/html,<script>alert(3)</script>"] });
    await insertSignals(gw.deps.db, h.accountId, [signal({ id: "evil-source", source: `<b onmouseover="alert(4)">src</b>`, topic: HOSTILE, category: "tech/ai", count: 1, link: "https://src.example/", observed_at: new Date(lastCompleteBucket().getTime() + 300_000).toISOString() })]);
    const res = await gw.http.get(linkFor(h.accountId, trend.id)).set(HTML);
    expect(res.status).toBe(200);
    const html = res.text;
    // Only the page's own elements, no event-handler attributes, no link of another scheme.
    const tags = new Set([...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1].toLowerCase()));
    expect([...tags].filter((t) => !PAGE_TAGS.includes(t))).toEqual([]);
    expect(html).not.toMatch(/<[^>]*\son\w+\s*=/i);
    expect(html).not.toMatch(/javascript:|data:text/i);
    expect(html).toContain("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &quot;quoted&quot; &amp; &#39;single&#39; &lt;/title&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("&lt;b onmouseover=&quot;alert(4)&quot;&gt;src&lt;/b&gt;");
    const hrefs = [...html.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);
    expect(hrefs).toEqual(["https://src.example/", "https://ok.example/x?q=%22%3E%3Cscript%3Ealert(2)%3C/script%3E"]);
  });

  test("the page is rate limited per client address", async () => {
    const limited = await startGateway({ RATE_LIMIT_PLANS: "free:3,pro:6000" });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.http.get("/briefings/x").set(HTML)).status);
      expect(statuses).toEqual([404, 404, 404, 429]);
      const res = await limited.http.get("/briefings/x");
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.headers["retry-after"]).toBeDefined();
    } finally {
      await limited.close();
    }
  });

  browser.test("the page renders in headless Chromium: text, a visible chart, no console errors or CSP violations, no script runs", async () => {
    const chromium = await browser.launch();
    const h = await gw.account();
    const hostile = await seedTrend(h.accountId, HOSTILE);
    const server: Server = await new Promise((resolve) => { const s = gw.app.listen(0, "127.0.0.1", () => resolve(s)); });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const page = await chromium.newPage();
      const problems: string[] = [];
      page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`); });
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      page.on("dialog", (d) => { problems.push(`dialog: ${d.message()}`); void d.dismiss(); });
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));

      const res = await page.goto(base + linkFor(a.accountId, trendA.id));
      expect(res?.status()).toBe(200);
      expect(await page.locator("h1").textContent()).toBe("AI agents");
      const text = await page.locator("body").innerText();
      for (const s of ["What rose", "410 mentions/h", "How fast", "Since when", "Why it is trending", "Co-occurring terms", "Sentiment", "Example posts", "Recommended next steps", "Generated"]) expect(text).toContain(s);
      const box = await page.locator("svg").boundingBox();
      expect(box && box.width > 100 && box.height > 50).toBe(true);
      const line = await page.locator("svg polyline").boundingBox();
      expect(line && line.width > 0).toBe(true);
      // The stylesheet applied (allowed by its hash): the tags are pills, not plain inline text.
      expect(await page.locator(".tags span").first().evaluate((el) => (globalThis as any).getComputedStyle(el).borderRadius)).not.toBe("0px");

      const evil = await page.goto(base + linkFor(h.accountId, hostile.id));
      expect(evil?.status()).toBe(200);
      expect(await page.locator("h1").textContent()).toBe(HOSTILE);
      expect(await page.locator("script, img").count()).toBe(0);

      expect(problems).toEqual([]);
      const gone = await page.goto(base + linkFor(a.accountId, trendA.id, { issuedAt: new Date(Date.now() - 7200_000) }));
      expect(gone?.status()).toBe(410);
      expect(await page.locator("h1").textContent()).toMatch(/expired/);
      // Chromium reports a document answered with an error status; nothing else may show up.
      expect(problems).toEqual(["error: Failed to load resource: the server responded with a status of 410 (Gone)"]);

      // Self-check: under the same headers, a script and a style the CSP does not name are refused, and reported.
      problems.length = 0;
      await page.route(`${base}/csp-selfcheck`, (r) => r.fulfill({ status: 200, headers: { ...BRIEFING_PAGE_HEADERS }, body: "<style>h1{color:red}</style><script>alert(1)</script><h1>x</h1>" }));
      await page.goto(`${base}/csp-selfcheck`);
      expect(problems.filter((p) => /violates the following Content Security Policy/.test(p)).length).toBe(2);
      expect(problems.some((p) => p.startsWith("dialog"))).toBe(false);
      expect(requests.every((u) => u.startsWith(base))).toBe(true); // nothing fetched from anywhere else
    } finally {
      await chromium.close();
      await new Promise((r) => server.close(r));
    }
  }, 60_000);
});
