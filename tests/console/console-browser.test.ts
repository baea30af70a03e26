// The web console in headless Chromium against the real stack (gateway, delivery and chat workers, Postgres, Redis)
// and a local webhook receiver: the journeys a customer makes, each checked where a person would see it and where
// it lands (the receiver, the database), plus axe-core on every page. With CONSOLE_SCREENSHOTS=<dir>, each page is
// also saved as a PNG there (how docs/console/*.png are made).
import fs from "node:fs";
import { createRequire } from "node:module";
import type { Server } from "node:http";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { insertOperatorItemIfAbsent, insertSignals, saveAuthorizedConnection } from "@trendgate/db";
import { DEFAULT_DETECTION_CONFIG, detectAccount } from "@trendgate/trends";
import { attachStream, type TrendStream } from "../../apps/gateway/src/stream/index.ts";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { testBrowser } from "../helpers/browser.ts";
import { waitFor } from "../helpers/config.ts";
import { signal } from "../helpers/gateway.ts";
import { freePort } from "../helpers/free-port.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";
import { startRedditAdsServer, type RedditAdsServer } from "../peers/reddit-ads-server.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { startTeamsServer, type TeamsServer } from "../peers/teams-server.ts";
import { addTrend, googleConnected } from "../ads/kit.ts";

const browser = await testBrowser();
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SHOTS = process.env.CONSOLE_SCREENSHOTS;

let stack: Stack;
let server: Server;
let stream: TrendStream;
let receiver: Receiver;
let reddit: RedditAdsServer;
let google: GoogleAdsServer;
let ms: TeamsServer;
let chromium: Browser;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  reddit = await startRedditAdsServer();
  google = await startGoogleAdsServer();
  ms = await startTeamsServer({ redirectUris: [`${base}/api/integrations/oauth/callback`] });
  stack = await startStack({
    ...ms.env,
    GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url,
    PUBLIC_BASE_URL: base,
    REDDIT_ADS_CLIENT_ID: reddit.app.clientId, REDDIT_ADS_CLIENT_SECRET: reddit.app.clientSecret, REDDIT_ADS_AUTHORIZE_URL: reddit.authorizeUrl,
    REDDIT_ADS_TOKEN_URL: reddit.tokenUrl, REDDIT_ADS_API_URL: reddit.url,
  });
  server = await new Promise<Server>((resolve) => { const s = stack.gw.app.listen(port, "127.0.0.1", () => resolve(s)); });
  stream = attachStream(server, stack.gw.deps);
  receiver = await startReceiver();
  chromium = await browser.launch();
});
afterAll(async () => {
  await chromium?.close();
  await stream?.close();
  if (server) await new Promise((r) => server.close(r));
  await stack?.close();
  await receiver?.close();
  await reddit?.close();
  await google?.close();
  await ms?.close();
});

type Account = Awaited<ReturnType<Stack["gw"]["account"]>>;

/** A one-time console link for the account, as the API returns it. */
async function link(a: Account, body: Record<string, unknown> = {}) {
  const res = await stack.gw.http.post("/api/console/sessions").set(a.auth).send(body);
  expect(res.status).toBe(201);
  return res.body as { id: string; url: string };
}

/** A browser tab with a console session of a new account; page errors and CSP violations fail the test. */
async function openConsole(a?: Account) {
  const account = a ?? await stack.gw.account();
  const session = await link(account);
  const context = await chromium.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error" && /Content Security Policy|Refused to/.test(m.text())) problems.push(m.text()); });
  await page.goto(session.url);
  await expect(page.getByRole("heading", { level: 1, name: "Overview" })).toBeVisibleSoon();
  return { account, session, context, page, problems };
}

/** axe-core's WCAG A/AA violations on the page as it is now (run through the DevTools protocol: the page's CSP forbids injected scripts). */
async function axeViolations(page: Page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(`axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })`) as { violations: unknown[] };
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/**
 * What does not fit the window sideways: the page itself, and each table whose scrolling box is narrower than its
 * table (a clipped column), by its label; cells wider than their column are clipped too.
 */
async function overflow(page: Page) {
  // A string: the test files are type-checked without the DOM's types.
  return await page.evaluate(`(() => {
    const found = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth + 1) found.push("page: " + root.scrollWidth + " px in " + root.clientWidth + " px");
    for (const wrap of document.querySelectorAll(".table-wrap")) {
      const name = wrap.getAttribute("aria-label");
      if (wrap.scrollWidth > wrap.clientWidth + 1) found.push(name + ": " + wrap.scrollWidth + " px in " + wrap.clientWidth + " px");
      for (const td of wrap.querySelectorAll("td")) {
        if (td.scrollWidth > td.clientWidth + 1) found.push(name + ", " + td.dataset.label + " cell: " + td.scrollWidth + " px in " + td.clientWidth + " px");
      }
    }
    return found;
  })()`) as string[];
}

/** The focused element after a dialog closed: its tag and name, and whether it is disabled (body: focus was lost). */
async function focused(page: Page) {
  return await page.evaluate(`(() => {
    const e = document.activeElement;
    return { tag: e ? e.tagName.toLowerCase() : "none", name: ((e && (e.getAttribute("aria-label") || e.textContent)) || "").trim().slice(0, 60), disabled: !!e && e.matches(":disabled") };
  })()`) as { tag: string; name: string; disabled: boolean };
}

/** Focus, once what the confirmed action changed has settled, is on something usable: not lost to <body>, not disabled. */
async function expectFocusKept(page: Page) {
  await page.waitForLoadState("networkidle");
  await new Promise((r) => setTimeout(r, 200));
  const f = await focused(page);
  expect({ lost: f.tag === "body" || f.tag === "none", disabled: f.disabled, f }).toMatchObject({ lost: false, disabled: false });
  return f;
}

async function shot(page: Page, name: string) {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

const visibleSoon = async (locator: ReturnType<Page["getByRole"]>, timeout = 15_000) => { await locator.first().waitFor({ state: "visible", timeout }); return true; };
declare global { namespace jest { interface Matchers<R> { toBeVisibleSoon(timeout?: number): Promise<R> } } }
expect.extend({
  async toBeVisibleSoon(locator: ReturnType<Page["getByRole"]>, timeout = 15_000) {
    try {
      await visibleSoon(locator, timeout);
      return { pass: true, message: () => `${locator} is visible` };
    } catch (err) {
      return { pass: false, message: () => `${locator} did not become visible within ${timeout} ms: ${(err as Error).message.split("\n")[0]}` };
    }
  },
});

const closeAll = async (...contexts: BrowserContext[]) => { for (const c of contexts) await c.close(); };

const HOUR = 3_600_000;
const flat = (n: number, v: number) => Array<number>(n).fill(v);

/**
 * Trend events in the account's history, as tests/webhooks/backtest.test.ts makes them: hourly mentions of a sustained
 * rise, a one-hour spike and a mild bump, then detection passes two minutes into each hour after the burst, each
 * pass's events stamped with its time (as if it had run then).
 */
async function seedHistory(accountId: string) {
  const burst = Math.floor(Date.now() / HOUR) * HOUR - 10 * HOUR;
  const from = burst - 24 * HOUR;
  const topics: Record<string, number[]> = {
    Sustained: [...flat(24, 100), 500, 600, 650, 700, ...flat(6, 100)],
    Spike: [...flat(24, 100), 600, ...flat(9, 100)],
    Mild: [...flat(24, 100), 210, ...flat(9, 100)],
  };
  for (const [topic, counts] of Object.entries(topics)) {
    const signals = counts.map((count, i) => signal({ id: `${topic}-${i}`, topic, category: "tech/ai", count, observed_at: new Date(from + i * HOUR + 60_000).toISOString() }));
    expect(await insertSignals(stack.gw.deps.db, accountId, signals)).toBe(counts.length);
  }
  const options = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };
  for (let k = 1; k <= 9; k++) {
    const at = new Date(burst + k * HOUR + 2 * 60_000);
    const before = new Date();
    await detectAccount(stack.gw.deps, accountId, at, options);
    await stack.gw.deps.db.trendEventRecord.updateMany({ where: { accountId, createdAt: { gte: before } }, data: { createdAt: at } });
  }
}

describe("opening the console", () => {
  browser.test("a link opens the console once, removes its token from the address bar, and a second use is refused", async () => {
    const { session, context, page, problems } = await openConsole();
    expect(page.url()).not.toContain("token=");
    expect(new URL(page.url()).searchParams.get("s")).toBe(session.id);
    const again = await context.browser()!.newContext();
    const second = await again.newPage();
    await second.goto(session.url);
    await expect(second.getByRole("alert")).toBeVisibleSoon();
    await expect(second.getByText(/expired or was already used/i)).toBeVisibleSoon();
    // Opened without a link by someone who never had a session here: told how to get one, not that it "ended".
    const fresh = await context.browser()!.newContext();
    const bare = await fresh.newPage();
    await bare.goto(new URL("/console/", session.url).href);
    await expect(bare.getByRole("heading", { name: "Open the console with a console link." })).toBeVisibleSoon();
    expect(await bare.getByText(/session has ended/i).count()).toBe(0);
    expect(await bare.getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/docs/");
    expect(problems).toEqual([]);
    await closeAll(context, again, fresh);
  });

  browser.test("a revoked session ends in the browser at its next request", async () => {
    const { account, session, context, page } = await openConsole();
    await page.waitForLoadState("networkidle"); // the overview's own requests are answered before the revocation
    expect((await stack.gw.http.delete(`/api/console/sessions/${session.id}`).set(account.auth)).status).toBe(204);
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Webhooks" }).click();
    await expect(page.getByText(/session has ended/i)).toBeVisibleSoon();
    await closeAll(context);
  });

  browser.test("Sign out revokes the session: the page says so and its token no longer opens anything", async () => {
    const { session, context, page } = await openConsole();
    const token = await page.evaluate(`JSON.parse(sessionStorage.getItem("trendgate.console")).access_token`) as string;
    expect((await stack.gw.http.get("/api/trends").set({ Authorization: `Bearer ${token}` })).status).toBe(200);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByRole("heading", { name: "You have signed out." })).toBeVisibleSoon();
    expect(await page.evaluate(`sessionStorage.getItem("trendgate.console")`)).toBeNull();
    expect((await stack.gw.http.get("/api/trends").set({ Authorization: `Bearer ${token}` })).status).toBe(401);
    const row = await stack.gw.deps.db.consoleSession.findUnique({ where: { id: session.id } });
    expect(row?.revokedAt).toBeInstanceOf(Date);
    await closeAll(context);
  });

  browser.test("another account's subscription is not found from this account's console", async () => {
    const other = await stack.gw.account();
    const theirs = await stack.gw.http.post("/api/integrations/webhooks").set(other.auth)
      .send({ url: receiver.url("/theirs"), trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0 });
    expect(theirs.status).toBe(201);
    const { context, page } = await openConsole();
    await page.goto(`${page.url().split("#")[0]}#/webhooks/${theirs.body.id}`);
    await expect(page.getByText(/does not exist/i)).toBeVisibleSoon();
    expect(await page.getByText(receiver.url("/theirs")).count()).toBe(0);
    await closeAll(context);
  });
});

browser.test("webhooks: create a subscription, send a test that arrives signed, see a failure in the log, replay it to success", async () => {
  const { context, page, problems } = await openConsole();
  const nav = page.getByRole("navigation", { name: "Console" });
  await nav.getByRole("link", { name: "Webhooks" }).click();
  await page.getByLabel("URL").fill(receiver.url("/journey"));
  await page.getByLabel("Description").fill("Journey receiver");
  await page.getByRole("button", { name: "Create subscription" }).click();

  // The signing secret is shown once, with a copy button.
  const secretText = page.getByText(/^whsec_/);
  await expect(secretText).toBeVisibleSoon();
  const secret = (await secretText.first().textContent())!.trim();
  await expect(page.getByRole("button", { name: /copy/i })).toBeVisibleSoon();
  await shot(page, "webhooks-created");

  await page.getByRole("link", { name: receiver.url("/journey") }).first().click();
  await expect(page.getByRole("heading", { level: 1 })).toBeVisibleSoon();
  await page.getByRole("button", { name: "Send test" }).click();
  const arrived = await waitFor(async () => receiver.on("/journey")[0]);
  // Verified with the secret the page showed, by the Standard Webhooks library.
  expect(() => new Webhook(secret).verify(arrived.body, arrived.headers as Record<string, string>)).not.toThrow();
  const log = page.getByRole("region", { name: /delivery log/i });
  await expect(log.getByRole("cell", { name: "succeeded", exact: true })).toBeVisibleSoon();

  // The receiver fails: the test delivery is retried, then shows as failed.
  receiver.setResponder(() => ({ status: 500, body: "receiver down" }));
  await page.getByRole("button", { name: "Send test" }).click();
  await expect(log.getByRole("cell", { name: "failed", exact: true })).toBeVisibleSoon(30_000);
  await shot(page, "webhook-log");
  // Each attempt's request and response can be opened.
  await log.getByRole("button", { name: /details/i }).first().click();
  await expect(log.getByText("receiver down")).toBeVisibleSoon();

  // Fixed: replaying the failed delivery succeeds, and the receiver gets it.
  receiver.setResponder(() => ({ status: 204 }));
  const before = receiver.on("/journey").length;
  await log.getByRole("button", { name: "Replay" }).first().click();
  await waitFor(async () => receiver.on("/journey").length > before);
  await waitFor(async () => (await log.getByRole("cell", { name: "succeeded", exact: true }).count()) >= 2, { timeoutMs: 20_000 });
  // Any attempt that is not waiting for a retry can be sent again, a succeeded one too (a receiver that lost it).
  const sent = receiver.on("/journey").length;
  const succeeded = log.getByRole("row").filter({ has: page.getByRole("cell", { name: "succeeded", exact: true }) }).first();
  await succeeded.getByRole("button", { name: "Replay" }).click();
  await waitFor(async () => receiver.on("/journey").length > sent);
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("webhooks: sensitivity and a trigger window set in the form; Preview on history shows the API's backtest of those rules; the detail page shows them", async () => {
  const a = await stack.gw.account();
  await seedHistory(a.accountId);
  const rules = { trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0, sensitivity: "normal", trigger_window_minutes: 60, recovery_window_minutes: 0, days: 14 };
  const res = await stack.gw.http.post("/api/integrations/webhooks/preview").set(a.auth).send(rules);
  expect(res.status).toBe(200);
  const expected = res.body as { deliveries: number; events_replayed: number; suppressed: Record<string, number>; per_day: unknown[]; trends: { trend_name: string }[] };
  // The rules matter on this history: something goes, something is held back by the window.
  expect(expected.deliveries).toBeGreaterThan(0);
  expect(expected.suppressed.trigger_window).toBeGreaterThan(0);

  const { context, page, problems } = await openConsole(a);
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Webhooks" }).click();
  const form = page.getByRole("form", { name: "New subscription" });
  await form.getByLabel("URL").fill(receiver.url("/tuned"));
  await form.getByLabel("Sensitivity").selectOption("normal");
  expect(await form.locator("#wh-sensitivity-hint").textContent()).toMatch(/^Medium severity and up\./);

  // A window over its maximum: the API's message is shown next to that field.
  const triggerWindow = form.getByLabel("Trigger window (minutes)");
  await triggerWindow.fill("2000");
  await form.getByRole("button", { name: "Preview on history" }).click();
  await expect(form.locator("#wh-trigger-window-error")).toBeVisibleSoon();
  expect(await triggerWindow.getAttribute("aria-invalid")).toBe("true");

  await triggerWindow.fill("60");
  await form.getByLabel("Rate limit (per second)").fill("5");
  await form.getByRole("button", { name: "Preview on history" }).click();
  const summary = form.getByRole("status").filter({ hasText: "would have sent" });
  await expect(summary).toBeVisibleSoon();
  const said = /would have sent (\d+) deliver/.exec((await summary.textContent()) ?? "");
  expect(Number(said?.[1])).toBe(expected.deliveries);
  expect(await summary.textContent()).toContain(`${expected.events_replayed} trend event`);
  const preview = form.getByRole("region", { name: "Preview on history" });
  expect(await preview.getByRole("listitem").filter({ hasText: "by the trigger window" }).textContent()).toBe(`${expected.suppressed.trigger_window} by the trigger window`);
  expect(await preview.getByRole("table", { name: "Deliveries per day (UTC)" }).getByRole("row").count()).toBe(expected.per_day.length + 1);
  const trends = preview.getByRole("table", { name: /trends/i });
  for (const t of expected.trends.slice(0, 10)) await expect(trends.getByText(t.trend_name, { exact: true })).toBeVisibleSoon();
  await page.waitForLoadState("networkidle");
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "webhooks-preview");

  // Created with those rules.
  await form.getByRole("button", { name: "Create subscription" }).click();
  await expect(page.getByText(/^whsec_/)).toBeVisibleSoon();
  const list = (await stack.gw.http.get("/api/integrations/webhooks").set(a.auth)).body.data as Record<string, unknown>[];
  expect(list).toHaveLength(1);
  expect(list[0]).toMatchObject({ url: receiver.url("/tuned"), sensitivity: "normal", trigger_window_minutes: 60, recovery_window_minutes: 0, rate_limit: 5 });

  // The detail page states them; the edit form changes a window (and can preview the edited rules too).
  await page.getByRole("link", { name: "Go to the subscription" }).click();
  const details = page.getByRole("region", { name: "Details" });
  await expect(details.getByText("Medium severity and up")).toBeVisibleSoon();
  await expect(details.getByText("1 h", { exact: true })).toBeVisibleSoon();
  await expect(details.getByText("At most 5 a second", { exact: true })).toBeVisibleSoon();
  await page.getByRole("button", { name: "Edit" }).click();
  const edit = page.getByRole("form", { name: "Edit subscription" });
  await edit.getByLabel("Recovery window (minutes)").fill("120");
  await edit.getByLabel("Rate limit (per second)").fill(""); // lifted
  await edit.getByRole("button", { name: "Preview on history" }).click();
  await expect(edit.getByRole("status").filter({ hasText: `would have sent ${expected.deliveries === 1 ? "1 delivery" : `${expected.deliveries} deliveries`}` })).toBeVisibleSoon();
  expect(await axeViolations(page)).toEqual([]);
  await edit.getByRole("button", { name: "Save changes" }).click();
  await expect(details.getByText("2 h", { exact: true })).toBeVisibleSoon();
  await expect(details.getByText("Unlimited", { exact: true })).toBeVisibleSoon();
  expect((await stack.gw.http.get(`/api/integrations/webhooks/${list[0].id}`).set(a.auth)).body).toMatchObject({ recovery_window_minutes: 120, rate_limit: null });
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("operator queue: an open item is acknowledged, then resolved, from the browser, recorded as the console session", async () => {
  const a = await stack.gw.account();
  await addTrend(stack.gw, a.accountId, "Heatwave sales");
  const trend = (await stack.gw.deps.db.trend.findFirst({ where: { accountId: a.accountId } }))!;
  const item = await stack.gw.deps.db.$transaction((tx) => insertOperatorItemIfAbsent(tx, {
    accountId: a.accountId, dedupKey: "trend:browser", trendId: trend.id, severity: "critical", title: "Heatwave sales", category: "retail",
    summary: "Mentions of heatwave sales are 6x their usual rate.", velocity: 240, briefingUrl: null, renotifyAt: null,
  }));
  const { session, context, page, problems } = await openConsole(a);
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Operator queue" }).click();
  const actions = page.getByRole("group", { name: "Actions for Heatwave sales" });
  await actions.getByRole("button", { name: "Acknowledge" }).click();
  await expect(actions.getByRole("button", { name: "Resolve" })).toBeVisibleSoon();
  await waitFor(async () => (await stack.gw.deps.db.operatorItem.findUnique({ where: { id: item!.id } }))?.state === "acknowledged");
  await shot(page, "operator");
  await actions.getByRole("button", { name: "Resolve" }).click();
  const resolved = await waitFor(async () => {
    const row = await stack.gw.deps.db.operatorItem.findUnique({ where: { id: item!.id } });
    return row?.state === "resolved" ? row : null;
  });
  expect(resolved.acknowledgedBy).toBe(`console:${session.id}`);
  expect(resolved.resolvedBy).toBe(`console:${session.id}`);

  // Feedback on the item's trend: recorded as the session, the topic's evidence bar shown; Undo deletes it.
  const feedback = page.getByRole("group", { name: "Feedback on Heatwave sales" });
  await feedback.getByRole("button", { name: "Not a trend" }).click();
  await expect(page.getByRole("status").filter({ hasText: "evidence bar is now 1.1" })).toBeVisibleSoon();
  const given = (await stack.gw.http.get(`/api/trends/${trend.id}/feedback`).set(a.auth)).body;
  expect(given).toMatchObject({ evidence_bar: 1.1, data: [{ verdict: "not_a_trend", actor: `console:${session.id}` }] });
  expect(await axeViolations(page)).toEqual([]);
  await feedback.getByRole("button", { name: "Undo" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Feedback removed" })).toBeVisibleSoon();
  expect((await stack.gw.http.get(`/api/trends/${trend.id}/feedback`).set(a.auth)).body).toEqual({ data: [], evidence_bar: 1 });
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("overview and connections: an account with no connection asks for no connection's status, so the browser logs no 404", async () => {
  const { context, page, problems } = await openConsole();
  // A failed request is logged in the browser console; collect every 404 the two pages' loads cause.
  const notFound: string[] = [];
  page.on("response", (r) => { if (r.status() === 404) notFound.push(new URL(r.url()).pathname); });
  await page.reload();
  await expect(page.getByRole("heading", { level: 1, name: "Overview" })).toBeVisibleSoon();
  await page.waitForLoadState("networkidle");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Connections" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Connections" })).toBeVisibleSoon();
  await page.waitForLoadState("networkidle");
  // The social providers are still listed, as not connected.
  const providers = (await stack.gw.http.get("/api/integrations/social/providers").set((await stack.gw.account()).auth)).body.data as { display_name: string; connected: boolean }[];
  expect(providers.length).toBeGreaterThan(0);
  for (const p of providers) await expect(page.getByRole("row", { name: new RegExp(p.display_name) }).first()).toBeVisibleSoon();
  // Chat, workflow, community ads and ads come from one list with the account's connections (GET /api/integrations/connections).
  expect(notFound).toEqual([]);
  for (const name of ["Slack", "n8n", "Reddit Ads", "Google Ads"]) await expect(page.getByRole("row", { name: new RegExp(name) }).first()).toBeVisibleSoon();
  // A provider connected with credentials says how, as the API's list has it from the provider's manifest.
  const n8n = ((await stack.gw.http.get("/api/integrations/connections").set((await stack.gw.account()).auth)).body.data as { provider: string; connect_hint: string }[])
    .find((p) => p.provider === "n8n")!;
  expect(n8n.connect_hint).toMatch(/POST \/api\/integrations\/workflow\/connect/);
  await expect(page.getByRole("row", { name: /n8n/ }).getByText(n8n.connect_hint, { exact: true })).toBeVisibleSoon();
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("connections: Reddit Ads is connected through its OAuth consent and the console shows it connected", async () => {
  const { account, context, page, problems } = await openConsole();
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Connections" }).click();
  await page.getByRole("button", { name: /^Connect Reddit Ads/ }).click();
  // The stand-in's consent redirects back through the gateway's callback to the console.
  await page.waitForURL((u) => u.pathname === "/console/" && u.searchParams.get("status") === "connected", { timeout: 15_000 });
  await expect(page.getByRole("heading", { level: 1, name: "Connections" })).toBeVisibleSoon();
  const status = await stack.gw.http.get("/api/integrations/community-ads/connection").set(account.auth);
  expect(status.body.status).toBe("connected");
  await expect(page.getByRole("button", { name: /^Reconnect Reddit Ads/ })).toBeVisibleSoon();
  await page.waitForLoadState("networkidle");
  // At 1280 px every column of the table shows: nothing scrolls sideways or is cut off.
  expect(await overflow(page)).toEqual([]);
  await shot(page, "connections-connected");

  // Disconnect, confirmed in the dialog: its button goes with the connection, and focus stays on the page's controls.
  await page.getByRole("button", { name: /^Disconnect Reddit Ads/ }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Disconnect", exact: true }).click();
  await expect(page.getByRole("button", { name: /^Connect Reddit Ads/ })).toBeVisibleSoon();
  expect(await page.getByRole("button", { name: /^Disconnect Reddit Ads/ }).count()).toBe(0);
  await expectFocusKept(page);
  expect((await stack.gw.http.get("/api/integrations/community-ads/connection").set(account.auth)).status).toBe(404);
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("connections: Microsoft Teams, from the API's chat provider list, is connected through its tenant's consent and shows connected; Routing lists its channels", async () => {
  const { account, context, page, problems } = await openConsole();
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Connections" }).click();
  const teams = page.getByRole("row").filter({ has: page.getByText("Microsoft Teams", { exact: true }) });
  await expect(teams.getByText("not connected", { exact: true })).toBeVisibleSoon();
  await page.getByRole("button", { name: "Connect Microsoft Teams" }).click();
  // The stand-in's consent page for the tenant, then back through the gateway's callback to the console.
  await page.getByRole("button", { name: "Approve" }).click();
  await page.waitForURL((u) => u.pathname === "/console/" && u.searchParams.get("connection") === "teams" && u.searchParams.get("status") === "connected", { timeout: 15_000 });
  await expect(page.getByRole("heading", { level: 1, name: "Connections" })).toBeVisibleSoon();
  await expect(page.getByRole("status").filter({ hasText: "Connected: teams" })).toBeVisibleSoon();
  await expect(teams.getByText("connected", { exact: true })).toBeVisibleSoon();
  await expect(teams.getByText(`tenant id: ${ms.tenant.id}`, { exact: false })).toBeVisibleSoon();
  await expect(page.getByRole("button", { name: "Reconnect Microsoft Teams" })).toBeVisibleSoon();
  await page.waitForLoadState("networkidle");
  expect(await overflow(page)).toEqual([]);
  const status = await stack.gw.http.get("/api/integrations/chat/teams/connection").set(account.auth);
  expect(status.body).toMatchObject({ status: "connected", account: { tenant_id: ms.tenant.id } });

  // A routing rule may name Teams, and its channel is picked from Teams' own channel list.
  const team = ms.addTeam({ displayName: `Marketing ${account.accountId.slice(-4)}`, installed: true });
  const alerts = ms.addChannel(team.id, { displayName: "Alerts" });
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Routing" }).click();
  await page.getByRole("button", { name: "Add rule" }).click();
  const editor = page.getByRole("group", { name: "Edit rule 1" });
  await editor.getByLabel("Chat provider").selectOption({ label: "Microsoft Teams" });
  const channel = editor.getByRole("combobox", { name: "Channel", exact: true });
  await expect(channel).toBeVisibleSoon();
  await channel.selectOption(`${team.id}/${alerts.id}`);
  expect(await channel.locator("option:checked").textContent()).toBe(`#${team.displayName} / Alerts`);
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("every page, with data on it, passes axe-core's WCAG 2.1 A/AA checks, and the cold load's weight is stated", async () => {
  // An account with what the pages show: trends, a subscription with deliveries, an operator item.
  const a = await stack.gw.account();
  await addTrend(stack.gw, a.accountId, "AI agents");
  await addTrend(stack.gw, a.accountId, "Foldable phones", { severity: "critical", stage: "peaking", velocity: 420, category: "tech/mobile" });
  const hook = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send({ url: receiver.url("/pages"), description: "Marketing automation", trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0 });
  expect(hook.status).toBe(201);
  expect((await stack.gw.http.post(`/api/integrations/webhooks/${hook.body.id}/test`).set(a.auth).send({})).status).toBe(202);
  await waitFor(async () => receiver.on("/pages").length > 0);
  // The item has its trend (the feedback buttons show), and a holiday calendar is set (the Mutes page lists holidays).
  const agents = (await stack.gw.deps.db.trend.findFirst({ where: { accountId: a.accountId, name: "AI agents" } }))!;
  expect((await stack.gw.http.put("/api/calendar").set(a.auth).send({ country: "US" })).status).toBe(200);
  // An on-call schedule (the On call page lists it with who is on call now and the next hand-off).
  expect((await stack.gw.http.post("/api/operator/schedules").set(a.auth).send({ name: "Primary", time_zone: "Europe/Berlin", rotation: {
    members: [{ name: "Ada", chat_users: [{ provider: "slack", user_id: "U0ADA00001" }] }, { name: "Bo", chat_users: [{ provider: "teams", user_id: "aad-bo" }] }],
    shift: "weekly", handoff_weekday: "monday", handoff_time: "09:00", start_date: "2026-01-05",
  } })).status).toBe(201);
  await stack.gw.deps.db.$transaction((tx) => insertOperatorItemIfAbsent(tx, {
    accountId: a.accountId, dedupKey: "trend:pages", trendId: agents.id, severity: "high", title: "AI agents", category: "tech/ai",
    summary: "Mentions of AI agents are 4x their usual rate.", velocity: 120, briefingUrl: null, renotifyAt: null,
  }));
  // Connections with what makes the Connections table wide: scopes, an account's facts, and a provider's error that
  // carries a URL (one long word).
  const connect = (provider: string, kind: string, scopes: string[], account: Record<string, string>) => stack.gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider, kind, credentialsSealed: sealTokens(stack.gw.deps.secrets, { accessToken: "t", tokenType: "bearer" }),
    tokenExpiresAt: new Date(Date.now() + HOUR), scopes, externalAccount: account,
  }));
  await connect("slack", "chat", ["channels:read", "groups:read", "chat:write", "channels:join"], { team_id: "T0123456789", team_name: "Acme Marketing Operations", bot_user_id: "U0BOTUSER01" });
  await connect("reddit_ads", "conversions", ["adsconversions", "history"], { account_id: "a2_abcdefg12345" });
  await stack.gw.deps.db.connection.updateMany({ where: { accountId: a.accountId, provider: "reddit_ads" }, data: {
    status: "error", lastErrorAt: new Date(), lastError: "invalid_grant: the refresh token was revoked (https://www.reddit.com/wiki/api/conversions#refresh-token-expiration)",
  } });
  const { context, page, problems } = await openConsole(a);
  const violations: Record<string, string[]> = {};
  const overflowing: Record<string, string[]> = {};
  // Every page of the navigation, on a desktop and on a phone (the layout and its focus order change at 390 px).
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(viewport);
    for (const name of ["Overview", "Webhooks", "Connections", "Operator queue", "Routing", "On call", "Mutes", "Ads", "Reports", "Activity"]) {
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name }).click();
      await expect(page.getByRole("heading", { level: 1, name })).toBeVisibleSoon();
      await page.waitForLoadState("networkidle");
      const found = await axeViolations(page);
      if (found.length) violations[`${name} at ${viewport.width} px`] = found;
      // Nothing is wider than the window; at 1280 px the Connections table fits too (narrower, tables scroll in their box).
      const wide = (await overflow(page)).filter((o) => o.startsWith("page:") || (viewport.width === 1280 && name === "Connections"));
      if (wide.length) overflowing[`${name} at ${viewport.width} px`] = wide;
      if (viewport.width === 1280) await shot(page, name.toLowerCase().replace(/ /g, "-"));
    }
  }
  // A subscription's own page too: its rules, its delivery log.
  await page.goto(`${page.url().split("#")[0]}#/webhooks/${hook.body.id}`);
  await expect(page.getByRole("heading", { level: 1, name: /Marketing automation/ })).toBeVisibleSoon();
  await page.waitForLoadState("networkidle");
  const detail = await axeViolations(page);
  if (detail.length) violations["Webhook detail at 390 px"] = detail;
  expect(violations).toEqual({});
  expect(overflowing).toEqual({});
  expect(problems).toEqual([]);

  // A cold load: the page and its two assets, as transferred (compressed) and as decoded: what a first visit
  // downloads before any API call.
  const cold = await chromium.newContext();
  const sizes: Record<string, { transferred: number; decoded: number }> = {};
  const p = await cold.newPage();
  p.on("requestfinished", async (r) => {
    const at = new URL(r.url()).pathname;
    if (!at.startsWith("/console")) return;
    const body = await (await r.response())!.body();
    sizes[at] = { transferred: (await r.sizes()).responseBodySize, decoded: body.length };
  });
  await p.goto(`${base}/console/`);
  await p.waitForLoadState("networkidle");
  const sum = (k: "transferred" | "decoded") => Object.values(sizes).reduce((s, n) => s + n[k], 0);
  process.stdout.write(`\nconsole cold load: ${Object.keys(sizes).length} files, ${sum("transferred")} bytes transferred, ${sum("decoded")} decoded ${JSON.stringify(sizes)}\n`);
  expect(Object.keys(sizes)).toHaveLength(3);
  // The assets travel compressed (br or gzip), well under their decoded size.
  expect(sum("transferred")).toBeLessThan(sum("decoded") / 2);
  await closeAll(context, cold);
}, 150_000); // axe over ten pages at two widths, plus the overflow checks: minutes on a busy 2-core machine

browser.test("ads: a plan is previewed with its diff, acknowledged and applied once, and Google's targeting then equals it", async () => {
  const a = await googleConnected(stack.gw, google);
  const campaign = google.addCampaign({ customerId: a.customer.id, name: "Search" });
  const group = google.addAdGroup({ campaignId: campaign.id, name: "AI" });
  google.addKeyword({ adGroupId: group.id, text: "machine learning", matchType: "PHRASE" });
  await addTrend(stack.gw, a.accountId, "AI agents");
  const ads = "/api/integrations/ads/google_ads";
  expect((await stack.gw.http.put(`${ads}/selection`).set(a.auth).send({ trend_category: "tech", account_id: a.customer.id })).status).toBe(200);
  expect((await stack.gw.http.put(`${ads}/mappings`).set(a.auth).send({ entities: [{ id: group.id, field: "keywords" }] })).status).toBe(200);

  const { session, context, page, problems } = await openConsole(a);
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Ads" }).click();
  const section = page.getByRole("region", { name: "Google Ads" });
  await section.getByRole("button", { name: "Preview" }).click();
  // The diff: the ad group's keywords before and after, with the trend's keyword added.
  await expect(section.getByText("ai agents").first()).toBeVisibleSoon();
  await shot(page, "ads-plan");
  await section.getByRole("button", { name: "Acknowledge and apply" }).click();
  const keywords = () => google.keywordsOf(group.id).filter((k) => !k.negative).map((k) => k.text).sort();
  await waitFor(async () => keywords().includes("ai agents"), { timeoutMs: 20_000 });
  expect(keywords()).toEqual(["ai agents", "machine learning"]);
  await expect(section.getByRole("cell", { name: "applied", exact: true })).toBeVisibleSoon(20_000);
  // Applied once, through the normal apply path: one write at Google.
  const writes = google.requests.filter((r) => r.path.endsWith(":mutate") && !r.body.validateOnly && r.body.operations.some((o: { create?: unknown }) => o.create));
  expect(writes.filter((r) => r.path.includes(a.customer.id))).toHaveLength(1);
  expect(session.id).toMatch(/^cs_/);
  expect(problems).toEqual([]);
  await closeAll(context);
});

describe("embedded in a customer's product", () => {
  /** The customer's own page (another site: localhost, where the console is on 127.0.0.1) holding the console in an iframe. */
  async function productPage(consoleUrl: string) {
    const product = await startReceiver(() => ({
      status: 200, headers: { "Content-Type": "text/html" },
      body: `<!doctype html><html lang="en"><title>Customer product</title><h1>Integrations</h1><iframe title="Trendgate" src="${consoleUrl}" width="1200" height="800"></iframe>`,
    }));
    return { product, url: `http://localhost:${product.port}/settings` };
  }

  browser.test("an account that allows the product's origin shows the console inside its iframe; others' links are refused there", async () => {
    const allowed = await stack.gw.account();
    const session = await link(allowed);
    const { product, url } = await productPage(session.url);
    try {
      expect((await stack.gw.http.put("/api/console/settings").set(allowed.auth).send({ frame_ancestors: [`http://localhost:${product.port}`] })).status).toBe(200);
      const context = await chromium.newContext();
      const page = await context.newPage();
      await page.goto(url);
      const frame = page.frameLocator("iframe[title=Trendgate]");
      await expect(frame.getByRole("heading", { level: 1, name: "Overview" }) as any).toBeVisibleSoon();

      // An account that allows no origin: the browser refuses to render its console in the frame.
      const other = await stack.gw.account();
      const refused = await link(other);
      const blocked: string[] = [];
      const page2 = await context.newPage();
      page2.on("console", (m) => { if (/frame-ancestors/.test(m.text())) blocked.push(m.text()); });
      const { product: product2, url: url2 } = await productPage(refused.url);
      try {
        await page2.goto(url2);
        await waitFor(async () => blocked.length > 0);
        expect(await page2.frameLocator("iframe[title=Trendgate]").getByRole("heading", { name: "Overview" }).count()).toBe(0);
        // The refused link was never opened: the page's script did not run, so the link still works once.
        expect((await stack.gw.http.post("/api/console/sessions/exchange").send({ token: new URL(refused.url).hash.slice("#token=".length) })).status).toBe(200);
      } finally {
        await product2.close();
      }
      await context.close();
    } finally {
      await product.close();
    }
  });
});

browser.test("the fleet view shows queue depths and table sizes to an ADMIN_TOKEN holder only", async () => {
  const context = await chromium.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/console/#/fleet`);
  await expect(page.getByRole("heading", { level: 1, name: "Fleet status" })).toBeVisibleSoon();
  // A customer's API key is not the admin token.
  const a = await stack.gw.account();
  await page.getByLabel("Admin token").fill(a.key);
  await page.getByRole("button", { name: "Show fleet status" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The admin token was not accepted." })).toBeVisibleSoon();
  expect(await page.getByRole("table", { name: "Queues" }).count()).toBe(0);

  await page.getByLabel("Admin token").fill(stack.gw.deps.config.ADMIN_TOKEN);
  await page.getByRole("button", { name: "Show fleet status" }).click();
  const queues = page.getByRole("table", { name: "Queues" });
  await expect(queues).toBeVisibleSoon();
  await expect(queues.getByRole("cell", { name: "webhook-deliveries" })).toBeVisibleSoon();
  await expect(page.getByRole("table", { name: "Tables" }).getByRole("cell", { name: "webhook_executions" })).toBeVisibleSoon();
  expect(await axeViolations(page)).toEqual([]);
  // The token is kept in the tab's memory only.
  expect(await page.evaluate(`JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + location.href`)).not.toContain(stack.gw.deps.config.ADMIN_TOKEN);
  await shot(page, "fleet");
  await closeAll(context);
});

browser.test("mutes: a topic muted for 24 hours from the console holds its event back, counts it, and Unmute removes the mute", async () => {
  const a = await stack.gw.account();
  const hook = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth).send(webhookBody(receiver.url("/muted")));
  expect(hook.status).toBe(201);
  // A holiday calendar too: the page's axe check and screenshot then cover its holidays section with data.
  expect((await stack.gw.http.put("/api/calendar").set(a.auth).send({ country: "US", region: "CA" })).status).toBe(200);
  const { session, context, page, problems } = await openConsole(a);
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Mutes" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Mutes" })).toBeVisibleSoon();
  await expect(page.getByText("Nothing is muted.")).toBeVisibleSoon();

  // Topic is the default, and 24 hours the default span.
  await page.getByRole("group", { name: "What to mute" }).getByRole("radio", { name: "Topic" }).check();
  await page.getByLabel("Topic name").fill("AI agents");
  expect(await page.getByLabel("For how long").inputValue()).toBe("1440");
  await page.getByRole("button", { name: "Mute", exact: true }).click();
  const row = page.getByRole("row", { name: /AI agents/ });
  await expect(row).toBeVisibleSoon();
  await expect(row.getByText("muted now")).toBeVisibleSoon();
  const mutes = (await stack.gw.http.get("/api/mutes").set(a.auth)).body.data as { id: string; topic: string; ends_at: string; created_by: string; active_now: boolean }[];
  expect(mutes).toHaveLength(1);
  expect(mutes[0]).toMatchObject({ topic: "AI agents", active_now: true, created_by: `console:${session.id}` });
  expect(Math.abs(Date.parse(mutes[0].ends_at) - Date.now() - 24 * 3600_000)).toBeLessThan(60_000);

  // An event for the topic: held back (the worker caches the account's mutes for TREND_ROUTING_CACHE_MS), and counted.
  await new Promise((r) => setTimeout(r, Number(stack.gw.deps.config.TREND_ROUTING_CACHE_MS) + 500));
  await stack.publish(trendEvent(a.accountId, { trend_name: "AI agents", trend_id: "trend_ai" }));
  await waitFor(async () => (await stack.gw.http.get(`/api/mutes/${mutes[0].id}`).set(a.auth)).body.suppressed === 1, { timeoutMs: 10_000 });
  const held = row.locator('td[data-label="Held back"]');
  await waitFor(async () => {
    await page.getByRole("button", { name: "Refresh" }).click();
    return /^1(\D|$)/.test(((await held.textContent()) ?? "").trim());
  }, { timeoutMs: 10_000, everyMs: 500 });
  await new Promise((r) => setTimeout(r, 500)); // nothing arrives late
  expect(receiver.on("/muted")).toEqual([]);
  await page.waitForLoadState("networkidle");
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "mutes");

  // Unmute, confirmed in the dialog: the row goes, and so does the mute.
  await page.getByRole("button", { name: "Unmute AI agents" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Unmute", exact: true }).click();
  await expect(page.getByText("Nothing is muted.")).toBeVisibleSoon();
  expect(await row.count()).toBe(0);
  // Its button went with its row: focus is on the page still (a keyboard user does not restart from the top).
  await expectFocusKept(page);
  expect((await stack.gw.http.get("/api/mutes").set(a.auth)).body.data).toEqual([]);
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("holidays: a calendar set to US on the Mutes page lists the next holidays; a wrong code is named at its field; Remove takes it away", async () => {
  const { account, context, page, problems } = await openConsole();
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Mutes" }).click();
  const card = page.getByRole("region", { name: "Holidays and campaigns" });
  await expect(card.getByText("No holiday calendar.")).toBeVisibleSoon();

  await card.getByLabel("Country").fill("us"); // upper-cased when sent
  await card.getByRole("button", { name: "Save calendar" }).click();
  const next = card.getByRole("table", { name: "Next holidays" });
  await expect(next).toBeVisibleSoon();
  const saved = (await stack.gw.http.get("/api/calendar").set(account.auth)).body as { country: string; region: string | null; upcoming: { name: string }[] };
  expect(saved).toMatchObject({ country: "US", region: null });
  expect(saved.upcoming.length).toBeGreaterThan(0);
  await expect(next.getByRole("cell", { name: saved.upcoming[0].name, exact: true }).first()).toBeVisibleSoon();
  await expect(card.getByText("Holiday calendar set to US.")).toBeVisibleSoon();

  // A region the country does not have: the API's message is shown at the Region field; nothing changes.
  await card.getByLabel("Region (optional)").fill("ZZ");
  await card.getByRole("button", { name: "Save calendar" }).click();
  await expect(card.locator("#cal-region-error")).toBeVisibleSoon();
  expect(await card.getByLabel("Region (optional)").getAttribute("aria-invalid")).toBe("true");
  expect((await stack.gw.http.get("/api/calendar").set(account.auth)).body.region).toBeNull();
  await page.waitForLoadState("networkidle");
  expect(await axeViolations(page)).toEqual([]);

  await card.getByRole("button", { name: "Remove calendar" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove", exact: true }).click();
  await expect(card.getByText("No holiday calendar.")).toBeVisibleSoon();
  // Remove was disabled while it ran, then went: focus moved to the nearest control of the form, Save calendar.
  expect(await expectFocusKept(page)).toMatchObject({ tag: "button", name: "Save calendar" });
  expect((await stack.gw.http.get("/api/calendar").set(account.auth)).body).toMatchObject({ country: null, upcoming: [] });
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("long lists page with Load more: the next page is appended, each row once", async () => {
  const a = await stack.gw.account();
  for (let i = 0; i < 55; i++) {
    expect((await stack.gw.http.post("/api/mutes").set(a.auth).send({ topic: `Topic ${String(i).padStart(2, "0")}`, duration_minutes: 60 })).status).toBe(201);
  }
  const { context, page, problems } = await openConsole(a);
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Mutes" }).click();
  const unmute = page.getByRole("button", { name: /^Unmute Topic/ });
  await expect(unmute).toBeVisibleSoon();
  await waitFor(async () => (await unmute.count()) === 50);
  await page.getByRole("button", { name: "Load more" }).click();
  await waitFor(async () => (await unmute.count()) === 55);
  const names = await unmute.allTextContents();
  expect(new Set(names).size).toBe(55);
  expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0);
  expect(problems).toEqual([]);
  await closeAll(context);
});

browser.test("routing: a rule with a category and a notify step is added, moved first and saved; a repeat step that is not last is named at its field", async () => {
  // A Slack connection (stored as the OAuth callback stores it: routes may name only a connected provider), a
  // subscription for a notify_webhook step, and one rule saved through the API.
  const { saveAuthorizedConnection } = await import("@trendgate/db");
  const { sealTokens } = await import("../../packages/connections/src/credentials.ts");
  const a = await stack.gw.account();
  await stack.gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "slack", kind: "chat", credentialsSealed: sealTokens(stack.gw.deps.secrets, { accessToken: `xoxb-${a.accountId}`, tokenType: "bot" }),
    tokenExpiresAt: null, scopes: ["chat:write", "channels:read"], externalAccount: { team_id: "T0CONSOLE1" },
  }));
  const hook = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth).send(webhookBody(receiver.url("/escalated"), { description: "Pager bridge" }));
  expect(hook.status).toBe(201);
  const first = { name: "Ads approvals", match: { event_types: ["ads.approval_requested"] }, provider: "slack", channel_id: "C0ADS00001", escalation: [] };
  const put = await stack.gw.http.put("/api/operator/routes").set(a.auth).send({ routes: [first], default_escalation: [] });
  expect(put.status).toBe(200);
  const firstId = put.body.routes[0].id as string;

  const { context, page, problems } = await openConsole(a);
  // Slack's channel list, as the gateway answers it (this stack has no Slack stand-in).
  await page.route("**/api/integrations/chat/channels?*", (r) => r.fulfill({
    status: 200, contentType: "application/json",
    body: JSON.stringify({ data: [
      { id: "C0ADS00001", name: "ads-approvals", is_private: false, is_member: true },
      { id: "C0FINANCE01", name: "finance", is_private: false, is_member: true },
    ], next_cursor: null }),
  }));
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Routing" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Routing" })).toBeVisibleSoon();
  await expect(page.getByRole("heading", { name: "1. Ads approvals" })).toBeVisibleSoon();

  // A new rule: name, a category, a severity, an event type, the channel picked from the list, and three steps.
  await page.getByRole("button", { name: "Add rule" }).click();
  const editor = page.getByRole("group", { name: "Edit rule 2" });
  await editor.getByLabel("Name", { exact: true }).fill("Finance desk");
  await editor.getByLabel("Categories").fill("finance");
  await editor.getByLabel("Minimum severity").selectOption("medium");
  await editor.getByRole("checkbox", { name: "trend.detected" }).check();
  const channel = editor.getByRole("combobox", { name: "Channel", exact: true });
  await expect(channel).toBeVisibleSoon();
  await channel.selectOption("C0FINANCE01");
  await editor.getByRole("button", { name: "Add a notification" }).click();
  const notify = editor.getByRole("group", { name: /^Step 1:/ });
  await notify.getByLabel("User id").fill("U0PRIMARY1");
  await notify.getByLabel("Message (optional)").fill("Finance: still open");
  await editor.getByRole("button", { name: "Add a wait" }).click();
  await editor.getByRole("group", { name: /^Step 2:/ }).getByLabel("Minutes").fill("10");
  await editor.getByRole("button", { name: "Add a webhook notification" }).click();
  await editor.getByRole("group", { name: /^Step 3:/ }).getByLabel("Webhook subscription").selectOption({ label: "Pager bridge" });
  // First match wins: the new rule goes before the other.
  await page.getByRole("button", { name: "Move up rule 2" }).click();
  await expect(page.getByRole("heading", { name: "1. Finance desk" })).toBeVisibleSoon();
  await page.getByRole("button", { name: "Save routes" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved: 2 rules" })).toBeVisibleSoon();

  const stored = (await stack.gw.http.get("/api/operator/routes").set(a.auth)).body as { routes: Record<string, unknown>[] };
  expect(stored.routes).toHaveLength(2);
  expect(stored.routes[0]).toMatchObject({
    name: "Finance desk", position: expect.any(Number), match: { categories: ["finance"], min_severity: "medium", event_types: ["trend.detected"] },
    provider: "slack", channel_id: "C0FINANCE01",
    escalation: [
      { type: "notify", mentions: [{ kind: "user", id: "U0PRIMARY1" }], message: "Finance: still open" },
      { type: "wait", minutes: 10 },
      { type: "notify_webhook", webhook_id: hook.body.id },
    ],
  });
  // The stored rule keeps its id through the console's save (its open items keep their rule); the new one has its own.
  expect(stored.routes[1]).toMatchObject({ ...first, id: firstId, match: { event_types: ["ads.approval_requested"] } });
  expect(stored.routes[0].id).not.toBe(firstId);
  const summary = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: "1. Finance desk" }) });
  await expect(summary.getByText("Notify @U0PRIMARY1, then wait 10 min, then notify the webhook Pager bridge")).toBeVisibleSoon();
  await page.getByRole("button", { name: "Edit rule 1" }).click();
  await page.waitForLoadState("networkidle");
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "operator-routes");

  // A repeat moved before the last step: the API refuses it (routes.0.escalation.2.type) and the page says so at that
  // step's Type field; nothing is stored.
  const saved = page.getByRole("group", { name: "Edit rule 1" });
  await saved.getByRole("button", { name: "Add a repeat" }).click();
  await saved.getByRole("group", { name: /^Step 4:/ }).getByRole("button", { name: "Move up step 4" }).click();
  await page.getByRole("button", { name: "Save routes" }).click();
  const repeat = saved.getByRole("group", { name: /^Step 3: repeat/ });
  await expect(repeat.getByText("repeat must be the last step")).toBeVisibleSoon();
  expect(await repeat.getByLabel("Type").getAttribute("aria-invalid")).toBe("true");
  await expect(page.getByRole("alert").getByText("routes.0.escalation.2.type", { exact: true })).toBeVisibleSoon();
  const after = (await stack.gw.http.get("/api/operator/routes").set(a.auth)).body as { routes: { escalation: unknown[] }[] };
  expect(after.routes[0].escalation).toHaveLength(3);
  expect(await axeViolations(page)).toEqual([]);
  expect(problems).toEqual([]);
  await closeAll(context);
}, 60_000); // two axe runs over a long form: slower than most
