// Every provider's vendor API version is one pin in its manifest (apiVersion), read through pinnedVersion only.
// This suite goes red 90 days before the sunset a pin's vendor documents, so the pin is moved while the vendor still
// answers it; and it checks that each configurable pin's variable is honoured and validated where it is read.
import { oauthClientOf, pinnedVersion, type ApiVersionPin, type ProviderManifest } from "@trendgate/connector-core";
import { CONNECTORS } from "@trendgate/connectors";

const pinned = CONNECTORS.map((c) => c.manifest).filter((m): m is ProviderManifest & { apiVersion: ApiVersionPin } => !!m.apiVersion);
const configurable = pinned.filter((m) => m.apiVersion.env);
const today = () => new Date().toISOString().slice(0, 10);
/** `day` (YYYY-MM-DD) plus `n` days. */
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
/** Days before its sunset a pin goes red (Meta's Marketing API may end a version 90 days after its successor ships). */
const LEAD_DAYS = 90;
/** Whether a pin is due to move on `day`: its sunset is not more than LEAD_DAYS ahead (null: none published). */
const dueToMove = (sunset: string | null, day: string) => sunset !== null && addDays(day, LEAD_DAYS) >= sunset;
/** Another version of the same shape as `v` (v25 -> v26, 202608 -> 202609, v1.3 -> v1.4). */
const another = (v: string) => v.replace(/\d+$/, (n) => String(Number(n) + 1).padStart(n.length, "0"));

test("every ads provider and n8n declare their version; Slack, whose Web API is unversioned, does not", () => {
  const ids = pinned.map((m) => m.id);
  for (const c of CONNECTORS) if (c.manifest.kind === "ads") expect(ids).toContain(c.manifest.id);
  expect(ids).toContain("n8n");
  expect(ids).not.toContain("slack");
});

describe.each(pinned.map((m) => [m.id, m] as const))("%s", (_id, m) => {
  test("its default matches its pattern, its sunset is a date or null, its source a vendor URL", () => {
    expect(m.apiVersion.pattern.test(m.apiVersion.default)).toBe(true);
    if (m.apiVersion.sunset !== null) expect(m.apiVersion.sunset).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(new URL(m.apiVersion.source).protocol).toBe("https:");
    expect(pinnedVersion(m, {})).toBe(m.apiVersion.default);
  });

  test(`its documented sunset is more than ${LEAD_DAYS} days away (else move the pin, and the table in docs/connectors.md)`, () => {
    const { sunset } = m.apiVersion;
    const due = dueToMove(sunset, today());
    expect({ provider: m.id, version: m.apiVersion.default, sunset, today: today(), dueToMove: due }).toEqual({ provider: m.id, version: m.apiVersion.default, sunset, today: today(), dueToMove: false });
  });
});

test(`the guard flags a pin ${LEAD_DAYS - 1} days before its sunset and passes one ${LEAD_DAYS + 1} days before`, () => {
  expect(dueToMove("2027-02-23", "2026-11-26")).toBe(true); // 89 days before
  expect(dueToMove("2027-02-23", "2026-11-25")).toBe(true); // 90
  expect(dueToMove("2027-02-23", "2026-11-24")).toBe(false); // 91
  expect(dueToMove("2027-02-23", "2027-02-24")).toBe(true); // past it
  expect(dueToMove(null, "2099-01-01")).toBe(false);
  // And for every dated pin, on its own date.
  const dated = pinned.filter((m) => m.apiVersion.sunset !== null);
  expect(dated.map((m) => m.id)).toContain("meta_ads");
  for (const m of dated) {
    const sunset = m.apiVersion.sunset!;
    expect({ provider: m.id, at89: dueToMove(sunset, addDays(sunset, -89)), at91: dueToMove(sunset, addDays(sunset, -91)) }).toEqual({ provider: m.id, at89: true, at91: false });
  }
});

describe.each(configurable.map((m) => [m.id, m] as const))("%s override", (_id, m) => {
  const name = m.apiVersion.env!;

  test("a well-formed override is used; a malformed one is refused naming the variable", () => {
    const other = another(m.apiVersion.default);
    expect(m.apiVersion.pattern.test(other)).toBe(true);
    expect(pinnedVersion(m, { [name]: other })).toBe(other);
    expect(pinnedVersion(m, { [name]: "" })).toBe(m.apiVersion.default);
    for (const bad of ["latest", `${m.apiVersion.default}/`, " "]) expect(() => pinnedVersion(m, { [name]: bad })).toThrow(new RegExp(`^${name} must look like`));
  });

  test("its clients read the version through the pin (a malformed override fails constructing them)", () => {
    const c = CONNECTORS.find((x) => x.manifest.id === m.id)!;
    if (c.manifest.kind !== "ads" || !("client" in c)) return;
    const ads = c as Extract<typeof c, { capabilities: { targeting: unknown } }>;
    const ctx = { baseUrl: "http://127.0.0.1:9", accessToken: "t", env: { [name]: "latest" } };
    expect(() => ads.client(ctx)).toThrow(name);
    if (ads.reporting) expect(() => ads.reporting!.client(ctx)).toThrow(name);
  });
});

test("Meta's OAuth dialog and token endpoint name the same Graph version as its API calls", () => {
  const meta = CONNECTORS.find((c) => c.manifest.id === "meta_ads")!.manifest;
  const env = { META_ADS_CLIENT_ID: "1", META_ADS_CLIENT_SECRET: "s" };
  const at = (e: Record<string, string>) => {
    const r = oauthClientOf(meta, e);
    if (!("client" in r)) throw new Error(`missing ${r.missing.join(", ")}`);
    return [r.client.authorizationUrl, r.client.tokenUrl];
  };
  expect(at(env)).toEqual(["https://www.facebook.com/v27.0/dialog/oauth", "https://graph.facebook.com/v27.0/oauth/access_token"]);
  expect(at({ ...env, META_ADS_API_VERSION: "v26.0" })).toEqual(["https://www.facebook.com/v26.0/dialog/oauth", "https://graph.facebook.com/v26.0/oauth/access_token"]);
  // An explicit URL override still wins (tests, proxies).
  expect(at({ ...env, META_ADS_API_VERSION: "v26.0", META_ADS_AUTHORIZE_URL: "http://127.0.0.1:1/dialog" })[0]).toBe("http://127.0.0.1:1/dialog");
  expect(() => at({ ...env, META_ADS_API_VERSION: "26" })).toThrow(/^META_ADS_API_VERSION must look like v27\.0/);
});
