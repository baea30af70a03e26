// The queue dashboard (Bull Board at /admin/queues) in a real browser: the admin guard's 401 must make a browser offer
// its Basic login (browsers read only the first challenge of a WWW-Authenticate line, so Basic comes first, on a line
// of its own), and after logging in with ADMIN_TOKEN the dashboard renders every queue. Real gateway, Postgres, Redis.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { Browser } from "playwright-core";
import { QUEUES } from "@trendgate/contracts";
import { testBrowser } from "../helpers/browser.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

const browser = await testBrowser();

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

/** The WWW-Authenticate header lines of a response, in the order they were sent. */
const challenges = (raw: string[]) => raw.flatMap((v, i) => (i % 2 === 1 && raw[i - 1].toLowerCase() === "www-authenticate" ? [v] : []));

test.each(["/admin/queues", "/metrics"])("%s without the admin token: 401 with a Basic challenge line first, then Bearer", async (path) => {
  const res = await gw.http.get(path);
  expect(res.status).toBe(401);
  expect(challenges((res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders)).toEqual(['Basic realm="trendgate-admin"', 'Bearer realm="trendgate-admin"']);
  expect(res.body.code).toBe("unauthorized");
});

describe("in a browser", () => {
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

  browser.test("without credentials the browser gets the 401; a wrong password is refused", async () => {
    const anonymous = await chromium.newContext();
    const wrong = await chromium.newContext({ httpCredentials: { username: "admin", password: "not-the-token" } });
    try {
      expect((await (await anonymous.newPage()).goto(`${base}/admin/queues`))?.status()).toBe(401);
      expect((await (await wrong.newPage()).goto(`${base}/admin/queues`))?.status()).toBe(401);
    } finally {
      await anonymous.close();
      await wrong.close();
    }
  });

  browser.test("the Basic login with ADMIN_TOKEN opens the dashboard, which lists every queue", async () => {
    // Playwright answers a Basic challenge with these credentials, as a person would in the browser's login prompt;
    // it sends nothing before the challenge, so this passes only if the browser took the 401 for a Basic login.
    const context = await chromium.newContext({ httpCredentials: { username: "admin", password: gw.deps.config.ADMIN_TOKEN } });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      const res = await page.goto(`${base}/admin/queues`);
      expect(res?.status()).toBe(200);
      expect(await page.title()).toContain("Trendgate queues");
      // The queue list is rendered by the dashboard's script from its API (also behind the guard).
      await page.getByText(QUEUES.webhookDeliveries, { exact: true }).first().waitFor({ state: "visible", timeout: 20_000 });
      const text = await page.locator("body").innerText();
      for (const name of Object.values(QUEUES)) expect(text).toContain(name);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
