import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type LaunchOptions } from "playwright-core";

// The headless Chromium the browser tests drive, found in this order: BROWSER_PATH (only that one when set), Debian's
// /usr/bin/chromium, then @sparticuz/chromium (a dev dependency: npm install brings it). When none works, the tests
// that need it are skipped with one line saying how to enable them; under CI=true or TEST_REQUIRE_BROWSER=1 they run
// and fail instead, so a CI run cannot pass without them.

const DEBIAN_CHROMIUM = "/usr/bin/chromium";
// A system Chromium as root in a container: no sandbox (no user namespaces), nothing fetched in the background.
const SYSTEM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];
// Of @sparticuz/chromium's flags (made for AWS Lambda), not these: two switch off protections the tests check
// (same-origin policy, mixed content), and one process for everything makes the browser exit when a context closes.
const DROPPED_ARGS = new Set(["--disable-web-security", "--allow-running-insecure-content", "--single-process"]);
const HOW_TO_ENABLE = "run npm install (it brings @sparticuz/chromium), install Debian's chromium, or set BROWSER_PATH to a Chromium";

const required = () => process.env.CI === "true" || process.env.TEST_REQUIRE_BROWSER === "1";

interface Candidate { name: string; options(): Promise<LaunchOptions> }

export interface TestBrowser {
  /** Which browser the tests use ("/usr/bin/chromium", "@sparticuz/chromium 153.0.0"), or null when none works. */
  readonly name: string | null;
  /** `test`; `test.skip` when there is no browser (unless one is required: then the test runs and fails). */
  readonly test: typeof test;
  /** A new headless browser; the caller closes it. */
  launch(): Promise<Browser>;
}

/** @sparticuz/chromium's browser, unpacked once per version into the system temp folder. */
async function sparticuz(): Promise<LaunchOptions> {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("@sparticuz/chromium");
  const pkgDir = path.resolve(path.dirname(entry), "..");
  const { version } = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")) as { version: string };
  const dir = path.join(os.tmpdir(), `trendgate-chromium-${version}`);
  const bin = path.join(dir, "chromium");
  if (!fs.existsSync(bin)) {
    // The package unpacks into TMPDIR and hands a second process the half-written binary while the first still
    // writes it (jest runs test files in parallel): unpack in a child whose TMPDIR is a private folder, then move
    // the folder into place in one rename.
    const staging = fs.mkdtempSync(`${dir}.partial-`);
    try {
      const script = `const { default: c } = await import(${JSON.stringify(pathToFileURL(entry).href)}); await c.executablePath();`;
      await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, TMPDIR: staging } });
      fs.renameSync(staging, dir);
    } catch (err) {
      fs.rmSync(staging, { recursive: true, force: true });
      if (!fs.existsSync(bin)) throw err; // else another process won the rename
    }
  }
  const { default: pkg } = await import("@sparticuz/chromium");
  return { executablePath: bin, args: pkg.args.filter((a) => !DROPPED_ARGS.has(a)) };
}

function candidates(): Candidate[] {
  const system = (p: string): Candidate => ({ name: p, options: async () => ({ executablePath: p, args: SYSTEM_ARGS }) });
  if (process.env.BROWSER_PATH) return [system(process.env.BROWSER_PATH)];
  return [
    ...(fs.existsSync(DEBIAN_CHROMIUM) ? [system(DEBIAN_CHROMIUM)] : []),
    { name: "@sparticuz/chromium", options: sparticuz },
  ];
}

/** Finds a browser that starts here (each candidate is launched once); call at the top of a test file. */
export async function testBrowser(): Promise<TestBrowser> {
  const problems: string[] = [];
  for (const c of candidates()) {
    try {
      const options: LaunchOptions = { ...(await c.options()), headless: true };
      const probe = await chromium.launch(options);
      const name = c.name.startsWith("@") ? `${c.name} ${probe.version()}` : c.name;
      await probe.close();
      return { name, test, launch: () => chromium.launch(options) };
    } catch (err) {
      problems.push(`${c.name}: ${String((err as Error).message ?? err).split("\n")[0]}`);
    }
  }
  const reason = `no headless Chromium works here (${problems.join("; ")})`;
  if (required()) {
    return { name: null, test, launch: () => Promise.reject(new Error(`${reason}. A browser is required (CI / TEST_REQUIRE_BROWSER=1): ${HOW_TO_ENABLE}`)) };
  }
  process.stderr.write(`\nbrowser tests skipped: ${reason}. To run them, ${HOW_TO_ENABLE}.\n`);
  return { name: null, test: test.skip, launch: () => Promise.reject(new Error(reason)) };
}
