import { createHash } from "node:crypto";
import { ProviderError, type ProviderEnv, type ProviderErrorKind } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { ConversionPush } from "@trendgate/contracts";
import type { ConversionResult, ConversionsClient } from "../kind.ts";
import type { TestIdPlacement } from "./config.ts";
import { trackingTypeOf } from "./schemas.ts";

// Reddit Ads Conversions API v3: POST {base}/api/v3/pixels/{pixel_id}/conversion_events with a
// Bearer token and `{data: {test_id?, events: [...]}}` (or the test id as `?test_id=`: REDDIT_ADS_TEST_ID_PLACEMENT). Personal identifiers leave hashed (SHA-256 hex of the
// normalised value; a value that already is a SHA-256 hex is passed through), the user agent raw. One request per
// call, no retries here: the outbox decides when to try again.

const PROVIDER = "reddit_ads";
const USER_AGENT = "trendgate/0.1 (conversions connector)";
const TIMEOUT_MS = 15_000;
const SHA256_HEX = /^[0-9a-f]{64}$/;

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const hashed = (v: unknown, normalise: (s: string) => string): string | undefined => {
  if (typeof v !== "string" || !v.trim()) return undefined;
  const n = normalise(v.trim());
  return SHA256_HEX.test(n) ? n : sha256(n);
};
export const normalise = {
  email: (s: string) => s.toLowerCase(),
  phone: (s: string) => (SHA256_HEX.test(s.toLowerCase()) ? s.toLowerCase() : `+${s.replace(/\D/g, "")}`),
  externalId: (s: string) => (SHA256_HEX.test(s.toLowerCase()) ? s.toLowerCase() : s),
  ip: (s: string) => s.toLowerCase(),
};

/** The push with its personal identifiers already hashed (done at push time, so raw ones are never stored). */
export function hashIdentifiers(e: ConversionPush): ConversionPush {
  const d = { ...e.data } as Record<string, unknown> & ConversionPush["data"];
  const set = (k: string, v: string | undefined) => { if (v === undefined) delete d[k]; else d[k] = v; };
  set("email", hashed(d.email, normalise.email));
  set("external_id", hashed(d.external_id, normalise.externalId));
  set("ip_address", hashed(d.ip_address, normalise.ip));
  set("phone", hashed(d.phone, normalise.phone));
  return { ...e, data: d };
}

/** The v3 event for one push. */
export function v3Event(e: ConversionPush): Record<string, unknown> {
  const d = e.data as Record<string, any>;
  const user: Record<string, unknown> = {};
  const put = (k: string, v: unknown) => { if (v !== undefined) user[k] = v; };
  put("email", hashed(d.email, normalise.email));
  put("external_id", hashed(d.external_id, normalise.externalId));
  put("ip_address", hashed(d.ip_address, normalise.ip));
  put("phone_number", hashed(d.phone, normalise.phone));
  put("user_agent", d.user_agent);
  put("uuid", d.uuid);
  const metadata: Record<string, unknown> = { conversion_id: d.conversion_id };
  for (const k of ["value", "currency", "item_count", "products"]) if (d[k] !== undefined) metadata[k] = d[k];
  return {
    event_at: d.event_at,
    action_source: d.action_source ?? "WEBSITE",
    type: trackingTypeOf(e.event_name),
    ...(d.click_id ? { click_id: d.click_id } : {}),
    user,
    metadata,
  };
}

/** The request body; `test_id` in it only when that is where it goes (else it is the URL's `?test_id=`). */
export function v3Body(events: ConversionPush[], testId?: string, placement: TestIdPlacement = "body") {
  return { data: { ...(testId && placement === "body" ? { test_id: testId } : {}), events: events.map(v3Event) } };
}

type ErrorBody = { error?: { code?: unknown; message?: unknown; fields?: { field?: unknown; message?: unknown }[] } };

const kindOfStatus = (s: number): ProviderErrorKind =>
  s === 401 ? "unauthorized" : s === 404 ? "not_found" : s === 429 ? "rate_limited" : s >= 500 || s === 408 ? "unavailable" : "bad_request";

/**
 * Requests one batch may spend isolating refused events when Reddit refuses it without naming them. Halving finds k
 * bad events among n in about 2k·log2(n) requests (3 in 1,000: ~60); a refusal of the whole request (every event bad,
 * or a bad test id) stops here instead of sending each event alone.
 */
export const MAX_ISOLATION_REQUESTS = 64;

/** A refusal that names no event (`{"error":{"code":400,"message":"invalid action_source: web"}}`). */
class FlatRefusal {
  constructor(readonly status: number, readonly code: string, readonly message: string) {}
}

export class RedditAdsConversionsClient implements ConversionsClient {
  constructor(private readonly ctx: { baseUrl: string; accessToken: string; testIdPlacement?: TestIdPlacement; env?: ProviderEnv }) {}

  /**
   * One request for the batch. When Reddit refuses it without naming events (its 400s often carry only a message),
   * the batch is halved and each half sent again until the refused events are isolated: they fail with Reddit's
   * message, the others are sent, so one bad event never costs its 999 neighbours.
   */
  async sendBatch(pixelId: string, events: ConversionPush[], opts: { testId?: string } = {}): Promise<ConversionResult[]> {
    const first = await this.post(pixelId, events, opts.testId);
    if (!(first instanceof FlatRefusal)) return first;
    const budget = { left: MAX_ISOLATION_REQUESTS };
    return this.isolate(pixelId, events, opts.testId, first, budget);
  }

  private async isolate(pixelId: string, events: ConversionPush[], testId: string | undefined, refusal: FlatRefusal, budget: { left: number }): Promise<ConversionResult[]> {
    const refused = (n: number, why: string) => Array.from({ length: n }, () => ({
      ok: false as const, error: new ProviderError(PROVIDER, "bad_request", why, { status: refusal.status, providerCode: refusal.code }),
    }));
    if (events.length === 1) return refused(1, `refused the event: ${refusal.message}`);
    const mid = events.length >> 1;
    const out: ConversionResult[] = [];
    for (const part of [events.slice(0, mid), events.slice(mid)]) {
      if (budget.left <= 0) {
        out.push(...refused(part.length, `refused with its batch, not isolated within ${MAX_ISOLATION_REQUESTS} requests: ${refusal.message}`));
        continue;
      }
      budget.left--;
      let r: ConversionResult[] | FlatRefusal;
      try {
        r = await this.post(pixelId, part, testId);
      } catch (err) {
        // Reddit stopped answering (429, 5xx, timeout) part way: this part is tried again later, the parts sent stand.
        const error = err instanceof ProviderError ? err : new ProviderError(PROVIDER, "unavailable", String(err));
        r = part.map(() => ({ ok: false as const, error }));
      }
      out.push(...(r instanceof FlatRefusal ? await this.isolate(pixelId, part, testId, r, budget) : r));
    }
    return out;
  }

  /** One request: the results, a refusal naming no event, or a thrown ProviderError for a failure of the request. */
  private async post(pixelId: string, events: ConversionPush[], testId: string | undefined): Promise<ConversionResult[] | FlatRefusal> {
    const url = new URL(`api/v3/pixels/${encodeURIComponent(pixelId)}/conversion_events`, this.ctx.baseUrl.endsWith("/") ? this.ctx.baseUrl : `${this.ctx.baseUrl}/`);
    const placement = this.ctx.testIdPlacement ?? "body";
    if (testId && placement === "query") url.searchParams.set("test_id", testId);
    const what = `conversion_events (${events.length} events)`;
    const res = await http.fetch(what, url, {
      env: this.ctx.env, method: "POST", timeoutMs: TIMEOUT_MS, json: v3Body(events, testId, placement),
      headers: { authorization: `Bearer ${this.ctx.accessToken}`, "user-agent": USER_AGENT },
    });
    if (res.status >= 200 && res.status < 300) return events.map(() => ({ ok: true, status: res.status }));

    const body: ErrorBody = res.body ?? {}; // not JSON: the status says it all
    const code = typeof body.error?.code === "string" || typeof body.error?.code === "number" ? String(body.error.code) : `http_${res.status}`;
    const message = typeof body.error?.message === "string" ? body.error.message.slice(0, 500) : `HTTP ${res.status}`;
    const kind = kindOfStatus(res.status);

    if (res.status === 400 || res.status === 422) {
      // Validation errors that name events (`data.events[3].event_at`): those events failed, the others did not reach
      // Reddit (it refuses the whole request) and are reported as unavailable so the caller sends them again.
      const perEvent = new Map<number, string[]>();
      for (const f of Array.isArray(body.error?.fields) ? body.error!.fields! : []) {
        const m = typeof f.field === "string" ? /events\[(\d+)\]\.?(.*)$/.exec(f.field) : null;
        if (!m || Number(m[1]) >= events.length) continue;
        const list = perEvent.get(Number(m[1])) ?? perEvent.set(Number(m[1]), []).get(Number(m[1]))!;
        list.push(`${m[2] || "event"}: ${typeof f.message === "string" ? f.message.slice(0, 200) : "invalid"}`);
      }
      if (perEvent.size) {
        return events.map((_, i) => {
          const errs = perEvent.get(i);
          return errs
            ? { ok: false, error: new ProviderError(PROVIDER, "bad_request", `refused the event: ${errs.join("; ")}`, { status: res.status, providerCode: code }) }
            : { ok: false, error: new ProviderError(PROVIDER, "unavailable", "not sent: another event of its batch was refused; sent again without it", { status: res.status, providerCode: "batch_refused" }) };
        });
      }
      // No field list at all: Reddit did not say which event (or whether the request as a whole) it refused.
      if (!Array.isArray(body.error?.fields)) return new FlatRefusal(res.status, code, message);
    }
    const extra = res.status === 403 ? " (the token has no access to this pixel)" : res.status === 404 ? " (unknown pixel)" : "";
    throw new ProviderError(PROVIDER, kind, `${what}: ${code}: ${message}${extra}`, {
      status: res.status, providerCode: code, ...(kind === "rate_limited" ? { retryAfterMs: res.waitMs } : {}),
    });
  }
}
