// Proves the Snap Marketing API stand-in (tests/peers/snap-ads-server.ts) speaks the protocol the Snap ads connector
// relies on, with plain fetch: the OAuth token endpoint (code, refresh with the reused refresh token), Bearer-only
// auth under /v1/, wrapped envelopes with request ids, opt-in paging with next_link, the Lifestyle Category lookup,
// whole-object PUTs of ad squads (fields not sent are gone, required ones refused, per-ad-squad sub-request
// statuses), PATCHes of the fields sent, read-only fields refused on both, Snap's targeting rules, and the bare 429.
import { SNAP_CODES, SNAP_READ_ONLY, startSnapAdsServer, type SnapAdsServer } from "./snap-ads-server.ts";

let snap: SnapAdsServer;
const TOKEN = "snap-test-token";
let account: string;
let campaign: string;
let squadId: string;
const TARGETING = { geos: [{ country_code: "us" }], demographics: [{ min_age: 18, max_age: 34 }], interests: [{ category_id: ["SLC_23"] }] };

beforeEach(async () => {
  snap = await startSnapAdsServer();
  snap.addToken(TOKEN);
  account = snap.addAdAccount({ name: "Shoes US" }).id;
  campaign = snap.addCampaign({ adAccountId: account, name: "Spring" }).id;
  squadId = snap.addAdSquad({ campaignId: campaign, name: "Music fans", targeting: TARGETING }).id;
});
afterEach(() => snap.close());

async function call(path: string, o: { method?: string; token?: string | null; body?: unknown } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? TOKEN}`;
  const res = await fetch(snap.url + path, { method: o.method ?? "GET", headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  let body: any = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body };
}
const token = (form: Record<string, string>) => fetch(`${snap.url}/login/oauth2/access_token`, { method: "POST", body: new URLSearchParams(form) })
  .then(async (r) => ({ status: r.status, body: await r.json() as any }));

describe("OAuth token endpoint", () => {
  test("a code gives a 30-minute token and a refresh token; a refresh gives a new token and the same refresh token", async () => {
    snap.addCode("code-1", { redirectUri: "https://app.example/cb", accounts: [account] });
    const creds = { client_id: snap.app.clientId, client_secret: snap.app.clientSecret };
    expect((await token({ ...creds, grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb/" })).body.error).toBe("invalid_grant");
    const first = await token({ ...creds, grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb" });
    expect(first).toEqual({ status: 200, body: { access_token: expect.any(String), token_type: "Bearer", expires_in: 1800, refresh_token: expect.any(String), scope: "snapchat-marketing-api" } });
    expect((await token({ ...creds, grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb" })).body.error).toBe("invalid_grant");
    expect((await call(`/v1/adaccounts/${account}`, { token: first.body.access_token })).status).toBe(200);

    const again = await token({ ...creds, grant_type: "refresh_token", refresh_token: first.body.refresh_token });
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(first.body.refresh_token);
    expect(again.body.access_token).not.toBe(first.body.access_token);
    expect((await call(`/v1/adaccounts/${account}`, { token: again.body.access_token })).status).toBe(200);
    expect(await token({ ...creds, client_secret: "nope", grant_type: "refresh_token", refresh_token: first.body.refresh_token })).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect((await token({ ...creds, grant_type: "refresh_token", refresh_token: "unknown" })).body.error).toBe("invalid_grant");
    expect(snap.counts).toEqual({ authorization_code: 1, refresh_token: 1, refused: 4 });
    expect(JSON.stringify(snap.requests)).not.toContain(first.body.refresh_token);
  });
});

describe("auth, envelopes and reads", () => {
  test("Bearer only: missing, unknown and expired tokens are 401 error envelopes; only /v1/ answers", async () => {
    for (const t of [null, "nope"]) {
      const r = await call(`/v1/adaccounts/${account}`, { token: t });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ request_status: "ERROR", request_id: expect.stringMatching(/^[0-9a-f]{64}$/), error_code: SNAP_CODES.unauthorized });
    }
    snap.addToken("short", { expiresInS: 1800 });
    expect((await call(`/v1/adaccounts/${account}`, { token: "short" })).status).toBe(200);
    snap.expireToken("short");
    expect((await call(`/v1/adaccounts/${account}`, { token: "short" })).body.debug_message).toBe("Access token expired");
    expect((await fetch(`${snap.url}/v1/adaccounts/${account}?access_token=${TOKEN}`)).status).toBe(401);
    expect((await call(`/v2/adaccounts/${account}`)).status).toBe(404);
    expect(JSON.stringify(snap.requests)).not.toContain(`Bearer ${TOKEN}`);
  });

  test("entities come wrapped with sub_request_status; another token's account is 403, an unknown one 404", async () => {
    const r = await call(`/v1/adsquads/${squadId}`);
    expect(r.body).toMatchObject({ request_status: "SUCCESS", request_id: expect.any(String), adsquads: [{ sub_request_status: "SUCCESS", adsquad: { id: squadId, campaign_id: campaign, targeting: TARGETING, daily_budget_micro: 50_000_000 } }] });
    expect(snap.requests.at(-1)!.adAccountId).toBe(account);
    snap.addToken("narrow", { accounts: [snap.addAdAccount().id] });
    expect((await call(`/v1/adaccounts/${account}/adsquads`, { token: "narrow" })).status).toBe(403);
    expect(await call("/v1/adaccounts/00000000-0000-0000-0000-000000000000/campaigns")).toMatchObject({ status: 404, body: { error_code: SNAP_CODES.notFound } });
  });

  test("paging is opt-in: limit 50..1000, next_link with a cursor until the last page", async () => {
    for (let i = 0; i < 60; i++) snap.addAdSquad({ campaignId: campaign, name: `Squad ${i}`, targeting: TARGETING });
    expect((await call(`/v1/adaccounts/${account}/adsquads`)).body.adsquads).toHaveLength(61);
    expect((await call(`/v1/adaccounts/${account}/adsquads?limit=10`)).body).toMatchObject({ request_status: "ERROR", error_code: SNAP_CODES.badRequest });
    const first = await call(`/v1/adaccounts/${account}/adsquads?limit=50`);
    expect(first.body.adsquads).toHaveLength(50);
    const next = new URL(first.body.paging.next_link);
    expect(next.searchParams.get("cursor")).toBeTruthy();
    const second = await call(`${next.pathname}${next.search}`);
    expect(second.body.adsquads).toHaveLength(11);
    expect(second.body.paging).toEqual({});
    const ids = [...first.body.adsquads, ...second.body.adsquads].map((w: any) => w.adsquad.id);
    expect(new Set(ids).size).toBe(61);
    expect((await call(`/v1/adaccounts/${account}/campaigns?limit=50`)).body.campaigns).toEqual([{ sub_request_status: "SUCCESS", campaign: expect.objectContaining({ id: campaign, ad_account_id: account }) }]);
  });

  test("the Lifestyle Category lookup lists every live category; a retired one is gone", async () => {
    const r = await call("/v1/targeting/interests/scls?country_code=us");
    expect(r.body.targeting_dimensions).toContainEqual({ sub_request_status: "SUCCESS", scls: { id: "SLC_23", name: "Music Fans", path: "/Music Fans", parent_id: "SLC_0", source: "SNAPCHAT" } });
    snap.retireInterest("SLC_23");
    expect((await call("/v1/targeting/interests/scls")).body.targeting_dimensions.map((d: any) => d.scls.id)).not.toContain("SLC_23");
  });
});

describe("PUT of whole ad squads", () => {
  const asRead = async () => (await call(`/v1/adsquads/${squadId}`)).body.adsquads[0].adsquad;
  /** The ad squad as read without its read-only fields: what a PUT may send. */
  const current = async () => { const s = await asRead(); for (const f of SNAP_READ_ONLY) delete s[f]; return s; };

  test("the ad squad sent back as read is refused for its read-only fields (E2023); without them it is stored whole", async () => {
    const read = await asRead();
    expect(Object.keys(read)).toEqual(expect.arrayContaining(["created_at", "updated_at", "delivery_status"]));
    const refused = await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: [read] } });
    expect([refused.status, refused.body.adsquads[0].sub_request_error_reason]).toEqual([400, expect.stringMatching(new RegExp(`^${SNAP_CODES.immutable}: created_at, updated_at, delivery_status are read-only`))]);
    const squad = await current();
    const sent = { ...squad, targeting: { ...squad.targeting, interests: [{ category_id: ["SLC_23", "SLC_37"] }] } };
    const r = await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: [sent] } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ request_status: "SUCCESS", request_id: expect.any(String), adsquads: [{ sub_request_status: "SUCCESS", adsquad: { id: squadId } }] });
    const after = snap.adSquad(squadId)!;
    expect(after.targeting.interests).toEqual([{ category_id: ["SLC_23", "SLC_37"] }]);
    expect(after.daily_budget_micro).toBe(50_000_000);
    expect(after.updated_at).not.toBe(read.updated_at);
  });

  test("it replaces, not merges: an optional field left out is gone, a required one left out is refused", async () => {
    const { targeting: _t, ...noTargeting } = await current();
    const refused = await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: [noTargeting] } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ request_status: "ERROR", adsquads: [{ sub_request_status: "ERROR", sub_request_error_reason: expect.stringMatching(new RegExp(`^${SNAP_CODES.required}: .*targeting`)) }] });
    const { pacing_type: _p, ...noPacing } = await current();
    expect((await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: [noPacing] } })).status).toBe(200);
    expect(snap.adSquad(squadId)!.pacing_type).toBeUndefined();
    const { daily_budget_micro: _b, ...noBudget } = await current();
    expect((await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: [noBudget] } })).body.adsquads[0].sub_request_error_reason).toMatch(/daily_budget_micro/);
  });

  test("Snap's targeting rules: geos required, multi-country needs one language, min_age >= 13, live interest ids", async () => {
    const squad = await current();
    const put = (targeting: unknown) => call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: [{ ...squad, targeting }] } })
      .then((r) => r.body.adsquads[0].sub_request_error_reason as string | undefined);
    expect(await put({ interests: [{ category_id: ["SLC_23"] }] })).toMatch(/geos is required/);
    expect(await put({ geos: [{ country_code: "us" }, { country_code: "ca" }] })).toMatch(/single languages/);
    expect(await put({ geos: [{ country_code: "us" }, { country_code: "ca" }], demographics: [{ languages: ["en"] }] })).toBeUndefined();
    expect(await put({ geos: [{ country_code: "us" }], demographics: [{ min_age: 12 }] })).toMatch(/min_age/);
    expect(await put({ geos: [{ country_code: "us" }], interests: [{ category_id: ["SLC_99999"] }] })).toMatch(new RegExp(`^${SNAP_CODES.invalidTargeting}: Invalid interest`));
    snap.retireInterest("SLC_37");
    expect(await put({ geos: [{ country_code: "us" }], interests: [{ category_id: ["SLC_37"] }] })).toMatch(/SLC_37/);
  });

  test("each ad squad of a batch answers for itself: PARTIAL with 200, ERROR with 400; a refused one is not changed", async () => {
    const other = snap.addAdSquad({ campaignId: campaign, name: "Gamers", targeting: TARGETING });
    snap.refuseAdSquad(other.id);
    const otherRead = (await call(`/v1/adsquads/${other.id}`)).body.adsquads[0].adsquad;
    for (const f of SNAP_READ_ONLY) delete otherRead[f];
    const both = [await current(), otherRead].map((s) => ({ ...s, name: `${s.name}!` }));
    const r = await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: both } });
    expect(r.status).toBe(200);
    expect(r.body.request_status).toBe("PARTIAL");
    expect(r.body.adsquads.map((a: any) => a.sub_request_status)).toEqual(["SUCCESS", "ERROR"]);
    expect(r.body.adsquads[1].sub_request_error_reason).toMatch(new RegExp(`^${SNAP_CODES.inReview}:`));
    expect(snap.adSquad(other.id)!.name).toBe("Gamers");
    expect(snap.writes.map((w) => w.ok)).toEqual([true, false]);
    const alone = await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquads: [both[1]] } });
    expect([alone.status, alone.body.request_status]).toEqual([400, "ERROR"]);
    // An ad squad of another campaign is not found through this one.
    const elsewhere = snap.addCampaign({ adAccountId: account, name: "Summer" }).id;
    expect((await call(`/v1/campaigns/${elsewhere}/adsquads`, { method: "PUT", body: { adsquads: [both[0]] } })).body.adsquads[0].sub_request_error_reason).toMatch(/not found/);
    expect((await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PUT", body: { adsquad: both[0] } })).status).toBe(400);
  });
});

describe("PATCH of the fields sent", () => {
  const patch = (item: Record<string, unknown>) => call(`/v1/campaigns/${campaign}/adsquads`, { method: "PATCH", body: { adsquads: [{ id: squadId, ...item }] } });

  test("changes only the fields sent (targeting replaced whole); the rest stays as stored", async () => {
    const before = snap.adSquad(squadId)!;
    const r = await patch({ targeting: { ...TARGETING, interests: [{ category_id: ["SLC_23", "SLC_37"] }] } });
    expect([r.status, r.body.request_status, r.body.adsquads[0].adsquad.id]).toEqual([200, "SUCCESS", squadId]);
    const after = snap.adSquad(squadId)!;
    expect(after.targeting.interests).toEqual([{ category_id: ["SLC_23", "SLC_37"] }]);
    expect({ ...after, targeting: null, updated_at: null }).toEqual({ ...before, targeting: null, updated_at: null });
    expect(snap.writes.map((w) => [w.method, w.ok])).toEqual([["PATCH", true]]);
  });

  test("read-only fields and immutable changes are refused with E2023; the result must pass the PUT's checks", async () => {
    for (const item of [{ updated_at: "2026-01-01T00:00:00.000Z" }, { delivery_status: ["VALID"] }, { type: "LEAD_GENERATION" }, { campaign_id: "elsewhere" }]) {
      const r = await patch(item);
      expect([Object.keys(item)[0], r.status, r.body.adsquads[0].sub_request_error_reason]).toEqual([Object.keys(item)[0], 400, expect.stringMatching(new RegExp(`^${SNAP_CODES.immutable}:`))]);
    }
    expect((await patch({ targeting: { interests: [{ category_id: ["SLC_23"] }] } })).body.adsquads[0].sub_request_error_reason).toMatch(/geos is required/);
    expect((await patch({ name: "" })).body.adsquads[0].sub_request_error_reason).toMatch(new RegExp(`^${SNAP_CODES.required}:`));
    expect((await call(`/v1/campaigns/${campaign}/adsquads`, { method: "PATCH", body: { adsquads: [{ targeting: TARGETING }] } })).body.adsquads[0].sub_request_error_reason).toMatch(/not found/);
    expect(snap.adSquad(squadId)!.targeting).toEqual(TARGETING);
  });
});

describe("throttling", () => {
  test("a throttle is a bare 429: no Retry-After, no rate-limit headers; the per-token budget throttles too", async () => {
    snap.failNext("throttle");
    const r = await call(`/v1/adsquads/${squadId}`);
    expect(r.status).toBe(429);
    expect([...r.headers.keys()].filter((h) => /retry|rate|limit/i.test(h))).toEqual([]);
    expect(snap.requests.at(-1)!.throttled).toBe(true);
    expect((await call(`/v1/adsquads/${squadId}`)).status).toBe(200);
    await snap.close();
    snap = await startSnapAdsServer({ perTokenPerSecond: 3 });
    snap.addToken(TOKEN);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call("/v1/targeting/interests/scls")).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});
