import { ProviderError, type Observation, type Page, type ProviderContext, type QuotaState } from "../types.ts";
import { callReddit, DEFAULT_RETRY_MS, PROVIDER, waitFromMessage } from "./http.ts";
import { toObservations, type RedditLink, type RedditListing } from "./observations.ts";

export interface RedditClientOptions {
  /** Where tokens are issued: https://www.reddit.com (the API itself is ctx.baseUrl, https://oauth.reddit.com). */
  authBaseUrl: string;
  /** Reddit throttles or blocks generic agents: use `<platform>:<app id>:<version> (by /u/<user>)`. */
  userAgent: string;
}

export interface RedditSearchParams {
  subreddit: string;
  query: string;
  /** The tracked term the observations count towards; defaults to `query`. */
  topic?: string;
  sort?: "relevance" | "new" | "top" | "comments";
  t?: "hour" | "day" | "week" | "month" | "year" | "all";
  /** Up to 100; defaults to 100 so a poll spends as few requests of the per-minute quota as possible. */
  limit?: number;
  /** `next` of the previous page (the last item's fullname). */
  after?: string;
}

/** `[code, message, field]` triples that Reddit returns with HTTP 200 from form endpoints such as /api/comment. */
type RedditFormErrors = [string, string, string | null][];

/**
 * Reddit Data API over OAuth. Searches take any token with the `read` scope (an app-only client-credentials token
 * will do); commenting needs a user token with `submit`. Every request carries the unique User-Agent.
 */
export class RedditClient {
  private readonly api: string;
  private readonly auth: string;
  private readonly userAgent: string;

  constructor(private readonly ctx: ProviderContext, opts: RedditClientOptions) {
    if (!opts.userAgent.trim()) throw new Error("reddit: a unique User-Agent is required");
    this.api = ctx.baseUrl.replace(/\/+$/, "");
    this.auth = opts.authBaseUrl.replace(/\/+$/, "");
    this.userAgent = opts.userAgent;
  }

  private headers(token: string): Record<string, string> {
    return { authorization: `Bearer ${token}`, "user-agent": this.userAgent };
  }

  /** One page of GET /r/{sub}/search restricted to the subreddit, newest first from the last day by default. */
  async searchSubreddit(params: RedditSearchParams, token: string): Promise<Page<Observation>> {
    // Checked here because the name becomes part of the path.
    if (!/^[A-Za-z0-9_]{2,21}$/.test(params.subreddit)) {
      throw new ProviderError(PROVIDER, "bad_request", `search: "${params.subreddit}" is not a subreddit name`);
    }
    const q = new URLSearchParams({
      q: params.query,
      restrict_sr: "1",
      sort: params.sort ?? "new",
      t: params.t ?? "day",
      limit: String(params.limit ?? 100),
      raw_json: "1", // otherwise Reddit HTML-escapes &, < and > in titles and bodies
    });
    if (params.after) q.set("after", params.after);
    const { json, quota } = await callReddit<RedditListing<RedditLink>>(
      this.ctx, "GET", `${this.api}/r/${params.subreddit}/search?${q}`, this.headers(token), "search",
    );
    if (json?.kind !== "Listing") throw new ProviderError(PROVIDER, "unavailable", "search: Reddit answered without a Listing", { status: 200 });
    return { items: toObservations(json, params.topic ?? params.query), next: json.data.after ?? null, quota };
  }

  /** App-only token (no user) for reads, from POST /api/v1/access_token on the auth host. */
  async clientCredentialsToken(clientId: string, secret: string): Promise<{ accessToken: string; expiresAt: Date; scope?: string }> {
    const basic = Buffer.from(`${clientId}:${secret}`).toString("base64");
    const { json } = await callReddit<{ access_token?: string; expires_in?: number; scope?: string; error?: string }>(
      this.ctx, "POST", `${this.auth}/api/v1/access_token`,
      { authorization: `Basic ${basic}`, "user-agent": this.userAgent, "content-type": "application/x-www-form-urlencoded" },
      "token", new URLSearchParams({ grant_type: "client_credentials" }).toString(),
    );
    // The token endpoint reports grant problems with HTTP 200 and {"error": "..."}.
    if (!json.access_token) {
      const kind = json.error === "invalid_grant" ? "unauthorized" : "bad_request";
      throw new ProviderError(PROVIDER, kind, `token: Reddit issued no token (${json.error ?? "no access_token in the answer"})`, { status: 200, providerCode: json.error });
    }
    return { accessToken: json.access_token, expiresAt: new Date(Date.now() + (json.expires_in ?? 3600) * 1000), scope: json.scope };
  }

  /** Comments on a post (t3_) or comment (t1_) with a user token; returns the new comment's fullname (t1_...). */
  async comment(params: { thingId: string; text: string }, token: string): Promise<{ id: string; quota: QuotaState }> {
    if (!/^t[13]_[a-z0-9]+$/i.test(params.thingId)) {
      throw new ProviderError(PROVIDER, "bad_request", `comment: "${params.thingId}" is not a post (t3_) or comment (t1_) fullname`);
    }
    // api_type=json makes Reddit answer {json:{errors,data}} instead of its legacy jQuery instructions.
    const form = new URLSearchParams({ api_type: "json", thing_id: params.thingId, text: params.text });
    const { json, quota } = await callReddit<{ json?: { errors?: RedditFormErrors; data?: { things?: { data?: { name?: string } }[] } } }>(
      this.ctx, "POST", `${this.api}/api/comment`,
      { ...this.headers(token), "content-type": "application/x-www-form-urlencoded" }, "comment", form.toString(),
    );
    const errors = json.json?.errors ?? [];
    if (errors.length > 0) throw formError(errors);
    const id = json.json?.data?.things?.[0]?.data?.name;
    if (!id) throw new ProviderError(PROVIDER, "unavailable", "comment: Reddit answered without the new comment", { status: 200 });
    return { id, quota };
  }
}

/** Maps the errors Reddit returns inside a 200 answer. */
function formError(errors: RedditFormErrors): ProviderError {
  const [code, message] = errors[0];
  const said = errors.map(([c, m]) => `${c}: ${m}`).join("; ");
  if (code === "RATELIMIT") {
    // The per-user posting limit, separate from the request quota: the wait is only given in the message.
    const retryAfterMs = waitFromMessage(message) ?? DEFAULT_RETRY_MS;
    return new ProviderError(PROVIDER, "rate_limited", `comment: ${said}`, { status: 200, providerCode: code, retryAfterMs });
  }
  if (code === "USER_REQUIRED") {
    return new ProviderError(PROVIDER, "unauthorized", `comment: ${said} (an app-only token cannot comment; use a user token with the submit scope)`, { status: 200, providerCode: code });
  }
  return new ProviderError(PROVIDER, "bad_request", `comment: ${said}`, { status: 200, providerCode: code });
}
