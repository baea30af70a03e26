// Proves the LinkedIn Marketing API stand-in (tests/peers/linkedin-ads-server.ts) speaks the protocol the LinkedIn
// ads connector relies on, with plain fetch: versioned headers on every call, Rest.li 2.0 query encoding, token
// checks and LinkedIn's flat error bodies, the OAuth token endpoint (60-day tokens, a refresh token that is not
// extended), page-token paging of the search finders, targeting entity lookups, audienceCounts, PARTIAL_UPDATE writes replacing the
// whole targetingCriteria, and throttles without any wait hint.
import { browse } from "./consent-page.ts";
import { LINKEDIN_FACETS as F, parseRestli, startLinkedInAdsServer, type Criteria, type LinkedInAdsServer } from "./linkedin-ads-server.ts";

let li: LinkedInAdsServer;
const TOKEN = "AQtest-linkedin-token";
const VIEWER = "AQtest-viewer-token";
const ACCOUNT = "508000001";
const US = "urn:li:geo:103644278";
const AI = "urn:li:interest:1001";
const ML = "urn:li:skill:2001";
const CRITERIA: Criteria = {
  include: { and: [{ or: { [F.locations]: [US] } }, { or: { [F.interests]: [AI], [F.skills]: [ML] } }, { or: { [F.interfaceLocales]: ["urn:li:locale:en_US"] } }] },
  exclude: { or: { "urn:li:adTargetingFacet:seniorities": ["urn:li:seniority:10"] } },
};
let campaignId: string;
let groupId: string;

beforeAll(async () => {
  li = await startLinkedInAdsServer();
  li.addAccount({ id: ACCOUNT, name: "Shoes US" });
  li.addAccount({ id: "508000099", name: "Someone else's" });
  li.addToken(TOKEN, { accounts: { [ACCOUNT]: "CAMPAIGN_MANAGER" } });
  li.addToken(VIEWER, { accounts: { [ACCOUNT]: "VIEWER" } });
  groupId = li.addGroup({ account: ACCOUNT, name: "Spring" }).id;
  li.addGroup({ account: ACCOUNT, name: "Old", status: "ARCHIVED" });
  for (let i = 0; i < 3; i++) li.addCampaign({ account: ACCOUNT, group: groupId, name: `Filler ${i}`, targetingCriteria: CRITERIA, status: "PAUSED" });
  campaignId = li.addCampaign({ account: ACCOUNT, group: groupId, name: "Engineers", targetingCriteria: CRITERIA }).id;
});
afterAll(() => li.close());
beforeEach(() => {
  li.resetLog();
  li.setCriteria(campaignId, CRITERIA);
});

const HEADERS = { "Linkedin-Version": "202608", "X-Restli-Protocol-Version": "2.0.0" };
async function api(method: string, path: string, o: { query?: string; body?: unknown; headers?: Record<string, string>; token?: string | null } = {}) {
  const token = o.token === undefined ? TOKEN : o.token;
  const res = await fetch(`${li.url}/rest/${path}${o.query ? `?${o.query}` : ""}`, {
    method, headers: { ...HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(o.body ? { "content-type": "application/json" } : {}), ...o.headers },
    ...(o.body ? { body: JSON.stringify(o.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
const patch = (criteria: unknown, headers: Record<string, string> = { "X-RestLi-Method": "PARTIAL_UPDATE" }, token?: string) =>
  api("POST", `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`, { body: { patch: { $set: { targetingCriteria: criteria } } }, headers, token });
/** A criteria as Rest.li 2.0 query text (the client's job; written out here to show the wire format). */
const enc = (s: string) => encodeURIComponent(s);

describe("versioned headers and tokens", () => {
  test("every call needs a published Linkedin-Version (served ~12 months) and X-Restli-Protocol-Version 2.0.0", async () => {
    const path = `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`;
    const missing = await fetch(`${li.url}/rest/${path}`, { headers: { authorization: `Bearer ${TOKEN}`, "X-Restli-Protocol-Version": "2.0.0" } });
    expect([missing.status, (await missing.json() as any).code]).toEqual([400, "VERSION_MISSING"]);
    // 202609-202611 were never published (the newest is 202608); 202508 is past its ~12 months.
    for (const v of ["202508", "202609", "202610", "202611", "2026-08", "20260801"]) {
      const r = await api("GET", path, { headers: { "Linkedin-Version": v } });
      expect([v, r.status, r.body.code]).toEqual([v, 426, "NONEXISTENT_VERSION"]);
    }
    expect((await api("GET", path, { headers: { "Linkedin-Version": "202509" } })).status).toBe(200);
    // A month LinkedIn skipped is refused even inside the window.
    const skipping = await startLinkedInAdsServer({ published: ["202606", "202608"] });
    try {
      skipping.addAccount({ id: ACCOUNT, name: "Shoes US" });
      skipping.addToken(TOKEN, { accounts: { [ACCOUNT]: "CAMPAIGN_MANAGER" } });
      const at = (v: string) => fetch(`${skipping.url}/rest/adAccounts/${ACCOUNT}`, { headers: { ...HEADERS, authorization: `Bearer ${TOKEN}`, "Linkedin-Version": v } }).then((r) => r.status);
      expect([await at("202606"), await at("202607"), await at("202608")]).toEqual([200, 426, 200]);
    } finally { await skipping.close(); }
    const v1 = await fetch(`${li.url}/rest/${path}`, { headers: { authorization: `Bearer ${TOKEN}`, "Linkedin-Version": "202608" } });
    expect(v1.status).toBe(400);
  });

  test("missing, unknown, expired and revoked tokens are 401s with LinkedIn's flat body and an x-li-uuid", async () => {
    const path = `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`;
    li.addToken("AQexpired", { accounts: { [ACCOUNT]: "VIEWER" }, expiresInS: 0 });
    li.addToken("AQrevoked", { accounts: { [ACCOUNT]: "VIEWER" } });
    li.revokeToken("AQrevoked");
    const answers = await Promise.all([null, "AQunknown", "AQexpired", "AQrevoked"].map((token) => api("GET", path, { token })));
    expect(answers.map((a) => [a.status, a.body.code])).toEqual([[401, "EMPTY_ACCESS_TOKEN"], [401, "INVALID_ACCESS_TOKEN"], [401, "EXPIRED_ACCESS_TOKEN"], [401, "REVOKED_ACCESS_TOKEN"]]);
    for (const a of answers) {
      expect(a.body).toEqual({ status: 401, serviceErrorCode: expect.any(Number), code: expect.any(String), message: expect.any(String) });
      expect(a.headers.get("x-li-uuid")).toBe(li.requests.find((r) => r.liUuid === a.headers.get("x-li-uuid"))!.liUuid);
    }
    expect(JSON.stringify(li.requests)).not.toContain(TOKEN);
  });
});

describe("OAuth token endpoint", () => {
  const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${li.url}/oauth/v2/accessToken`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form) })
      .then(async (r) => ({ status: r.status, body: await r.json() as any }));
  const creds = () => ({ client_id: li.app.clientId, client_secret: li.app.clientSecret });

  test("a code gives a 60-day token and a 365-day refresh token; refreshing keeps the refresh token and its end", async () => {
    li.addCode("code-1", { redirectUri: "https://app.example/cb", accounts: { [ACCOUNT]: "CAMPAIGN_MANAGER" } });
    expect((await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb/", ...creds() })).body.error).toBe("invalid_request");
    expect((await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb" }, { authorization: `Basic ${Buffer.from(`${li.app.clientId}:${li.app.clientSecret}`).toString("base64")}` })).status).toBe(400);
    expect((await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb", client_id: li.app.clientId, client_secret: "nope" })).status).toBe(401);
    const first = await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb", ...creds() });
    expect(first).toEqual({ status: 200, body: { access_token: expect.any(String), expires_in: 5_184_000, refresh_token: expect.any(String), refresh_token_expires_in: 31_536_000, scope: "r_ads,rw_ads" } });
    expect((await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb", ...creds() })).status).toBe(400); // used
    expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`, { token: first.body.access_token })).status).toBe(200);

    await new Promise((r) => setTimeout(r, 1100));
    const next = await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token, ...creds() });
    expect(next.body.refresh_token).toBe(first.body.refresh_token);
    expect(next.body.access_token).not.toBe(first.body.access_token);
    expect(next.body.refresh_token_expires_in).toBeLessThan(31_536_000);
    li.expireRefreshToken(first.body.refresh_token);
    expect((await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token, ...creds() })).status).toBe(400);
    expect(li.counts).toMatchObject({ authorization_code: 1, refresh_token: 1 });
    expect(JSON.stringify(li.requests)).not.toContain(li.app.clientSecret);
  });
});

describe("reads", () => {
  test("consent grants the scopes asked for that the app's products allow: r_ads_reporting only with reporting access", async () => {
    const grantFor = async (server: LinkedInAdsServer) => {
      const url = new URL(server.authorizeUrl);
      Object.entries({ response_type: "code", client_id: server.app.clientId, redirect_uri: "https://app.example/cb", state: "s1", scope: "r_ads rw_ads r_ads_reporting" })
        .forEach(([k, v]) => url.searchParams.set(k, v));
      const code = (await browse(url.href)).searchParams.get("code")!;
      const res = await fetch(`${server.url}/oauth/v2/accessToken`, {
        method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "https://app.example/cb", client_id: server.app.clientId, client_secret: server.app.clientSecret }),
      });
      return ((await res.json()) as { scope: string }).scope.split(",");
    };
    expect(await grantFor(li)).toEqual(["r_ads", "rw_ads", "r_ads_reporting"]);
    const noReporting = await startLinkedInAdsServer({ grantableScopes: ["r_ads", "rw_ads"] });
    try {
      expect(await grantFor(noReporting)).toEqual(["r_ads", "rw_ads"]);
    } finally {
      await noReporting.close();
    }
  });

  test("Rest.li 2.0 values parse with URNs percent-encoded inside; raw colons inside a record do not", () => {
    expect(parseRestli(`(include:(and:List((or:(${enc(F.locations)}:List(${enc(US)}))))))`)).toEqual({ include: { and: [{ or: { [F.locations]: [US] } }] } });
    expect(parseRestli("List()")).toEqual([]);
    expect(() => parseRestli(`(or:(${F.locations}:List(${US})))`)).toThrow(/Rest.li/);
  });

  test("campaign groups and campaigns page with pageSize and page tokens; the status search filters", async () => {
    const groups = await api("GET", `adAccounts/${ACCOUNT}/adCampaignGroups`, { query: "q=search&search=(status:(values:List(ACTIVE,PAUSED)))&pageSize=10" });
    expect(groups.body).toEqual({ elements: [expect.objectContaining({ name: "Spring", account: `urn:li:sponsoredAccount:${ACCOUNT}` })], metadata: {} });
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await api("GET", `adAccounts/${ACCOUNT}/adCampaigns`, { query: `q=search&pageSize=3${token ? `&pageToken=${token}` : ""}` });
      names.push(...page.body.elements.map((c: any) => c.name));
      token = page.body.metadata.nextPageToken;
    } while (token);
    expect(names).toEqual(["Filler 0", "Filler 1", "Filler 2", "Engineers"]);
    const active = await api("GET", `adAccounts/${ACCOUNT}/adCampaigns`, { query: "q=search&search=(status:(values:List(ACTIVE)))&pageSize=10" });
    expect(active.body.elements.map((c: any) => c.name)).toEqual(["Engineers"]);
    expect(active.body.elements[0]).toMatchObject({ id: Number(campaignId), campaignGroup: `urn:li:sponsoredCampaignGroup:${groupId}`, targetingCriteria: CRITERIA });
    expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns`, { query: "q=search&pageSize=1001" })).status).toBe(400);
    expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns`, { query: "q=search&start=0&count=10" })).status).toBe(400); // index paging is gone since 202401
    expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns`, { query: "q=search&pageToken=bm9wZQ" })).status).toBe(400);
    expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns`, { query: "q=search&search=(status:(values:List(SLEEPING)))" })).status).toBe(400);
    expect((await api("GET", "adAccounts/508000099/adCampaigns", { query: "q=search" })).body).toMatchObject({ status: 403, code: "ACCESS_DENIED" });
    expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns/999`)).status).toBe(404);
  });

  test("without pageSize a search answers 100 and a token for the rest", async () => {
    for (let i = 0; i < 101; i++) li.addGroup({ account: "508000099", name: `g${i}` });
    li.addToken("AQbig", { accounts: { "508000099": "VIEWER" } });
    const first = await api("GET", "adAccounts/508000099/adCampaignGroups", { query: "q=search", token: "AQbig" });
    expect([first.body.elements.length, typeof first.body.metadata.nextPageToken]).toEqual([100, "string"]);
    const rest = await api("GET", "adAccounts/508000099/adCampaignGroups", { query: `q=search&pageToken=${first.body.metadata.nextPageToken}`, token: "AQbig" });
    expect(rest.body).toEqual({ elements: [expect.objectContaining({ name: "g100" })], metadata: {} });
  });

  test("adTargetingEntities: typeahead per facet, names by URN list", async () => {
    const ta = await api("GET", "adTargetingEntities", { query: `q=typeahead&queryVersion=QUERY_USES_URNS&facet=${enc(F.skills)}&query=machine%20learning&locale=(language:en,country:US)` });
    expect((await api("GET", "adTargetingEntities", { query: `q=typeahead&facet=${enc(F.skills)}&query=machine` })).status).toBe(400);
    expect(ta.body.elements).toEqual([{ urn: ML, facetUrn: F.skills, name: "Machine Learning" }]);
    const names = await api("GET", "adTargetingEntities", { query: `q=urns&urns=List(${enc(AI)},${enc(ML)},${enc("urn:li:interest:404")})` });
    expect(names.body.elements.map((e: any) => e.name)).toEqual(["Artificial Intelligence", "Machine Learning"]);
    expect((await api("GET", "adTargetingEntities", { query: `q=urns&urns=List(${AI})` })).status).toBe(400);
  });

  test("audienceCounts sizes a criteria, reports under 300 as 0, and refuses one without a location", async () => {
    const count = (c: string) => api("GET", "audienceCounts", { query: `q=targetingCriteriaV2&targetingCriteria=${c}` });
    const us = await count(`(include:(and:List((or:(${enc(F.locations)}:List(${enc(US)}))),(or:(${enc(F.interests)}:List(${enc(AI)}))))))`);
    expect(us.body.elements).toEqual([{ active: expect.any(Number), total: 27_600_000 }]);
    const tiny = await count(`(include:(and:List((or:(${enc(F.locations)}:List(${enc(US)}))),(or:(${enc(F.skills)}:List(${enc("urn:li:skill:2005")}))))))`);
    expect(tiny.body.elements).toEqual([{ active: 0, total: 0 }]);
    const noGeo = await count(`(include:(and:List((or:(${enc(F.interests)}:List(${enc(AI)}))))))`);
    expect([noGeo.status, noGeo.body.code]).toEqual([400, "MISSING_LOCATION_FACET"]);
    const unknown = await count(`(include:(and:List((or:(${enc(F.locations)}:List(${enc(US)}))),(or:(${enc(F.interests)}:List(${enc("urn:li:interest:404")}))))))`);
    expect([unknown.status, unknown.body.message]).toEqual([400, expect.stringContaining("urn:li:interest:404")]);
  });
});

describe("PARTIAL_UPDATE writes", () => {
  test("a $set of targetingCriteria replaces the whole criteria: 204, no body, an x-li-uuid", async () => {
    const only = { include: { and: [{ or: { [F.locations]: [US] } }, { or: { [F.interests]: [AI, "urn:li:interest:1002"] } }] } };
    const r = await patch(only);
    expect([r.status, r.body]).toEqual([204, null]);
    expect(r.headers.get("x-li-uuid")).toBeTruthy();
    expect(li.criteriaOf(campaignId)).toEqual(only); // skills, locales and the exclusion are gone: nothing was merged
    expect(li.planNames(li.criteriaOf(campaignId))).toEqual(["Artificial Intelligence", "Cloud Computing"]);
    expect(li.writes.map((w) => [w.campaignId, w.ok])).toEqual([[campaignId, true]]);
  });

  test("without X-RestLi-Method, without a location, with a viewer's token or on a locked campaign nothing changes", async () => {
    const noGeo = { include: { and: [{ or: { [F.interests]: [AI] } }] } };
    expect((await patch(CRITERIA, {})).status).toBe(400);
    expect((await patch(noGeo)).body).toMatchObject({ status: 400, code: "MISSING_LOCATION_FACET" });
    expect((await patch(CRITERIA, undefined, VIEWER)).body).toMatchObject({ status: 403, code: "ACCESS_DENIED" });
    const small = { include: { and: [{ or: { [F.locations]: [US] } }, { or: { [F.skills]: ["urn:li:skill:2005"] } }] } };
    expect((await patch(small)).body.code).toBe("AUDIENCE_TOO_SMALL");
    li.lockCampaign(campaignId);
    expect((await patch({ include: { and: [{ or: { [F.locations]: [US] } }] } })).body).toMatchObject({ status: 400, code: "CAMPAIGN_NOT_EDITABLE" });
    expect(li.criteriaOf(campaignId)).toEqual(CRITERIA);
    const body = await api("POST", `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`, { body: { patch: { $set: { dailyBudget: { amount: "9999", currencyCode: "USD" } } } }, headers: { "X-RestLi-Method": "PARTIAL_UPDATE" } });
    expect(body.status).toBe(204); // budgets are not locked by creative review; recorded so tests can prove we never send them
    expect(li.budgetWrites).toEqual([{ campaignId, field: "dailyBudget", value: { amount: "9999", currencyCode: "USD" } }]);
  });
});

test("throttles are 429 with no Retry-After or rate-limit header; outages 503", async () => {
  li.failNext("throttle", 1);
  const t = await api("GET", `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`);
  expect([t.status, t.body.code]).toEqual([429, "TOO_MANY_REQUESTS"]);
  expect([...t.headers.keys()].filter((h) => /retry|rate|limit/i.test(h))).toEqual([]);
  expect(li.requests.at(-1)!.throttled).toBe(true);
  expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`)).status).toBe(200);
  li.failNext("unavailable", 1);
  expect((await api("GET", `adAccounts/${ACCOUNT}/adCampaigns/${campaignId}`)).status).toBe(503);
});
