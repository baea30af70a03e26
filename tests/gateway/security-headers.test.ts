// Security headers on every answer (JSON, problems, pages), and the pages they constrain still work in a browser:
// Swagger UI at /docs and Bull Board at /admin/queues render with no Content-Security-Policy violation.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { Browser, Page } from "playwright-core";
import { testBrowser } from "../helpers/browser.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

const browser = await testBrowser();

let gw: TestGateway;
let auth: { Authorization: string };
beforeAll(async () => {
  gw = await startGateway();
  ({ auth } = await gw.account());
});
afterAll(async () => { await gw.close(); });

const expectBase = (h: Record<string, string>) => {
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["x-frame-options"]).toBe("DENY");
  expect(h["referrer-policy"]).toBe("no-referrer");
  expect(h["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
};

test.each([
  ["a JSON answer", () => gw.http.get("/api/keys").set(auth), 200],
  ["a problem", () => gw.http.get("/api/keys"), 401],
  ["an unknown route", () => gw.http.get("/nothing/here"), 404],
  ["the public status", () => gw.http.get("/status"), 200],
  ["the OpenAPI document", () => gw.http.get("/openapi.json"), 200],
  ["a briefing error page", () => gw.http.get("/briefings/not-a-token").set("Accept", "text/html"), 404],
])("%s carries nosniff, a frame-ancestors CSP, X-Frame-Options and Referrer-Policy", async (_what, send, status) => {
  const res = await send();
  expect(res.status).toBe(status);
  expectBase(res.headers);
});

test("API answers allow nothing to load; /docs allows its own scripts and styles only", async () => {
  expect((await gw.http.get("/api/keys").set(auth)).headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
  const docs = await gw.http.get("/docs/");
  expect(docs.status).toBe(200);
  expectBase(docs.headers);
  expect(docs.headers["content-security-policy"]).toMatch(/script-src 'self'(;|$)/);
  const dash = await gw.http.get("/admin/queues").set({ Authorization: `Bearer ${gw.deps.config.ADMIN_TOKEN}` });
  expect(dash.status).toBe(200);
  expectBase(dash.headers);
  expect(dash.headers["content-security-policy"]).toMatch(/script-src 'self'(;|$)/);
});

describe("in a browser, the pages render under their policies", () => {
  let server: Server;
  let base: string;
  let chromium: Browser;
  beforeAll(async () => {
    chromium = await browser.launch();
    server = await new Promise((resolve) => { const s = gw.app.listen(0, "127.0.0.1", () => resolve(s)); });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await chromium?.close();
    if (server) await new Promise((r) => server.close(r));
  });

  /** Every CSP violation and script error of the page (Chromium reports violations on the console). */
  const watch = (page: Page) => {
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text()); });
    return problems;
  };

  browser.test("Swagger UI shows the API reference with no CSP violation", async () => {
    const context = await chromium.newContext();
    try {
      const page = await context.newPage();
      const problems = watch(page);
      expect((await page.goto(`${base}/docs/`))?.status()).toBe(200);
      await page.locator(".swagger-ui .info .title").first().waitFor({ state: "visible", timeout: 20_000 });
      expect(await page.locator(".swagger-ui .info .title").first().innerText()).toContain("Trendgate");
      await page.locator(".opblock").first().waitFor({ state: "visible", timeout: 20_000 });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  browser.test("Bull Board renders its queues with no script blocked", async () => {
    const context = await chromium.newContext({ httpCredentials: { username: "admin", password: gw.deps.config.ADMIN_TOKEN } });
    try {
      const page = await context.newPage();
      const problems = watch(page);
      expect((await page.goto(`${base}/admin/queues`))?.status()).toBe(200);
      await page.getByText("webhook", { exact: false }).first().waitFor({ state: "visible", timeout: 20_000 });
      // Google's fonts are allowed by the policy; a sandbox without internet fails to fetch them, which is no violation.
      expect(problems.filter((p) => !/fonts\.g(oogleapis|static)\.com/.test(p) || /Content Security Policy/.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
