import { JOB_PAYLOADS, QUEUES, Signal, type SocialAction, type SocialProvider } from "@trendgate/contracts";
import {
  GoogleTrendsClient, ProviderError, QuotaLedger, RedditClient, XClient, YouTubeClient,
  type Observation, type ProviderContext, type QuotaSnapshot, type QuotaState,
} from "@trendgate/connector-social";
import { insertSignals, newId, type Prisma } from "@trendgate/db";
import type { ProcessorFactory, WorkerDeps } from "./types.ts";

// Social and search connectors (X, Reddit, YouTube; Google Trends validates on demand). One job scheduler (kept in
// place by every worker that runs this queue: ../schedulers/index.ts) ticks every SOCIAL_POLL_INTERVAL_SECONDS for
// the whole fleet; the tick claims the connections that are due (status active, rate_limited or quota_exhausted,
// next_poll_at <= now) by pushing their next_poll_at forward by a lease, and
// queues one {connection_id} job each. That job polls every term, stores the observations as signals and sets the
// next poll time from the outcome:
//   success           -> active, next poll after the interval (or at the provider's window reset if it is spent)
//   rate_limited      -> rate_limited, next poll after the provider's retry time
//   quota_exhausted   -> quota_exhausted, next poll when the quota resets (YouTube: midnight Pacific)
//   unauthorized      -> needs_reauth, not polled until the credentials are replaced; an account event is recorded
//   unavailable       -> status kept, next poll after an exponential backoff (30 s doubling per failure, at most 1 h)
//   bad_request       -> error, not polled until the connection is changed
// Signals: source = provider, id = the provider's item id, so a re-fetched item is ignored. An item found by
// several terms counts towards the first term that stored it.

type Row = Prisma.SocialConnectionGetPayload<object>;
interface TermCursor { since_id?: string; newest_at?: string; videos?: Record<string, { total: number; hour: string | null; seen: string }> }
interface Cursor { terms?: Record<string, TermCursor>; failures?: number; actions?: SocialAction[] }
interface Outcome {
  observations: Observation[];
  terms: Record<string, TermCursor>;
  quota: Record<string, unknown>;
  error?: ProviderError;
  /** The provider's window is spent: do not poll before this. */
  notBefore?: Date;
}

const LEASE_SECONDS = 600; // a claimed connection is claimed again only if its job did not finish within this
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 3_600_000;
const TRENDS_POLL = { pollIntervalMs: 1000, maxWaitMs: 60_000 };

const quotaJson = (q: QuotaState) => ({ limit: q.limit, remaining: q.remaining, reset_at: q.resetAt?.toISOString() ?? null, cost: q.cost });
const spent = (q: QuotaState) => q.remaining === 0 && q.resetAt && q.resetAt.getTime() > Date.now() ? q.resetAt : undefined;
const hourOf = (d: Date) => new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000).toISOString().slice(0, 16) + "Z";

export const socialPoll: ProcessorFactory = {
  queue: QUEUES.socialPoll,
  create(deps) {
    const { db, logger } = deps;
    return {
      async process(job) {
        const data = JOB_PAYLOADS[QUEUES.socialPoll].parse(job.data);
        if (!data.connection_id) return tick(deps);
        const conn = await db.socialConnection.findUnique({ where: { id: data.connection_id } });
        if (!conn) return { skipped: "connection deleted" };
        if (data.action === "reply" || data.action === "validate") return runAction(deps, conn, data.action, data.action_id!);
        if (conn.status === "needs_reauth" || conn.status === "error") {
          if (data.action_id) await updateAction(deps, conn.id, data.action_id, { status: "failed", error: `not polled: connection status is ${conn.status}` });
          return { skipped: conn.status };
        }
        const result = await poll(deps, conn);
        if (data.action_id) {
          await updateAction(deps, conn.id, data.action_id, result.error
            ? { status: "failed", error: result.error, result: { stored: result.stored } }
            : { status: "succeeded", result: { stored: result.stored, observations: result.observations } });
        }
        if (result.stored) logger.info({ connection_id: conn.id, provider: conn.provider, stored: result.stored }, "social poll stored signals");
        return result;
      },
    };
  },
};

/** Claims the due connections (pushing next_poll_at forward by the lease) and queues a poll job for each. */
async function tick({ db, queues }: WorkerDeps) {
  // next_poll_at is a timestamp without time zone holding UTC (Prisma's convention), hence AT TIME ZONE 'UTC'.
  const { rows } = await db.$pool.query<{ id: string }>(
    `UPDATE social_connections SET next_poll_at = (now() AT TIME ZONE 'UTC') + $1 * interval '1 second'
      WHERE id IN (SELECT id FROM social_connections
                    WHERE status IN ('active', 'rate_limited', 'quota_exhausted') AND next_poll_at <= (now() AT TIME ZONE 'UTC')
                    ORDER BY next_poll_at LIMIT 1000 FOR UPDATE SKIP LOCKED)
      RETURNING id`, [LEASE_SECONDS]);
  const at = Date.now();
  for (const r of rows) await queues.add(QUEUES.socialPoll, { connection_id: r.id }, { jobId: `poll-${r.id}-${at}` });
  return { queued: rows.length };
}

function context(deps: WorkerDeps, baseUrl: string): ProviderContext {
  return { baseUrl, request: (m, u, i) => deps.connectors.request(m, u, i) };
}

function baseUrlOf(deps: WorkerDeps, conn: Row): string {
  const c = deps.config;
  const defaults: Record<SocialProvider, string> = {
    x: c.SOCIAL_X_BASE_URL, reddit: c.SOCIAL_REDDIT_BASE_URL, youtube: c.SOCIAL_YOUTUBE_BASE_URL, google_trends: c.SOCIAL_GOOGLE_TRENDS_BASE_URL,
  };
  return conn.baseUrl ?? defaults[conn.provider as SocialProvider];
}

const credentialsOf = (deps: WorkerDeps, conn: Row) => JSON.parse(deps.secrets.open(conn.credentialsCiphertext)) as Record<string, string>;

/** Polls every term of a connection, stores the signals and records the outcome on the connection. */
async function poll(deps: WorkerDeps, conn: Row) {
  const now = new Date();
  const cursor = conn.cursor as Cursor;
  const options = conn.options as Record<string, any>;
  let outcome: Outcome;
  try {
    const creds = credentialsOf(deps, conn);
    const ctx = context(deps, baseUrlOf(deps, conn));
    const terms = { ...cursor.terms };
    if (conn.provider === "x") outcome = await pollX(ctx, conn, creds, options, terms);
    else if (conn.provider === "reddit") outcome = await pollReddit(deps, ctx, conn, creds, options, terms);
    else if (conn.provider === "youtube") outcome = await pollYouTube(ctx, conn, creds, options, terms, now);
    else return { stored: 0, observations: 0, skipped: "not polled" };
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    outcome = { observations: [], terms: { ...cursor.terms }, quota: conn.quota as Record<string, unknown>, error: e };
  }

  const category = (options.category as string | undefined) ?? `social/${conn.provider.replace("_", "-")}`;
  const signals: Signal[] = [];
  for (const o of outcome.observations) {
    const s = Signal.safeParse({
      id: o.externalId, source: conn.provider, topic: o.topic, category, count: Math.max(0, Math.round(o.count)),
      ...(o.sentiment === undefined ? {} : { sentiment: o.sentiment }), observed_at: o.observedAt.toISOString(),
      ...(o.link && o.link.length <= 2000 ? { link: o.link } : {}),
    });
    if (s.success) signals.push(s.data);
  }
  const stored = await insertSignals(deps.db, conn.accountId, signals, deps.config.DETECTION_BUCKET_SECONDS);

  const interval = deps.config.SOCIAL_POLL_INTERVAL_SECONDS * 1000;
  let status = "active";
  let lastError: string | null = null;
  let next: Date | null = new Date(Math.max(now.getTime() + interval, outcome.notBefore?.getTime() ?? 0));
  let failures = 0;
  const e = outcome.error;
  if (e) {
    lastError = e.message;
    if (e.kind === "rate_limited") {
      status = "rate_limited";
      next = new Date(Date.now() + Math.max(1000, e.detail.retryAfterMs ?? interval));
    } else if (e.kind === "quota_exhausted") {
      status = "quota_exhausted";
      next = e.detail.resetAt ?? new Date(Date.now() + 3_600_000);
    } else if (e.kind === "unauthorized") {
      status = "needs_reauth";
      next = null;
    } else if (e.kind === "bad_request") {
      status = "error";
      next = null;
    } else {
      status = conn.status; // unavailable: keep the status, back off
      failures = (cursor.failures ?? 0) + 1;
      next = new Date(Date.now() + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (failures - 1)));
    }
  }

  // Only if the credentials were not replaced meanwhile (a PUT resets the status and polls at once).
  const { rowCount } = await deps.db.$pool.query(
    `UPDATE social_connections
        SET status = $2, last_error = $3, next_poll_at = ($4::timestamptz AT TIME ZONE 'UTC'), last_polled_at = ($5::timestamptz AT TIME ZONE 'UTC'),
            quota = $6::jsonb, cursor = cursor || jsonb_build_object('terms', $7::jsonb, 'failures', $8::int), updated_at = (now() AT TIME ZONE 'UTC')
      WHERE id = $1 AND credentials_ciphertext = $9`,
    [conn.id, status, lastError, next?.toISOString() ?? null, now.toISOString(), JSON.stringify(outcome.quota), JSON.stringify(outcome.terms), failures, conn.credentialsCiphertext],
  );
  if (rowCount && status === "needs_reauth" && conn.status !== "needs_reauth") {
    await deps.db.accountEvent.create({
      data: { id: newId("evt"), accountId: conn.accountId, type: "connector.needs_reauth", data: { connection_id: conn.id, provider: conn.provider, reason: lastError } },
    });
  }
  return { stored, observations: outcome.observations.length, status, error: lastError };
}

const newer = (a: string, b: string | undefined) => b === undefined || BigInt(a) > BigInt(b);

/** X: recent search per term from the newest post seen (since_id), up to max_pages pages of page_size. */
async function pollX(ctx: ProviderContext, conn: Row, creds: Record<string, string>, options: Record<string, any>, terms: Record<string, TermCursor>): Promise<Outcome> {
  const x = new XClient(ctx);
  const observations: Observation[] = [];
  let last: QuotaState | undefined;
  const out = (error?: ProviderError): Outcome => ({ observations, terms, quota: last ? { last: quotaJson(last) } : (conn.quota as Record<string, unknown>), error, notBefore: last && spent(last) });
  for (const term of conn.terms) {
    let res;
    try {
      res = await x.searchAll({ query: term, topic: term, sinceId: terms[term]?.since_id, maxResults: options.page_size ?? 100, maxPages: options.max_pages ?? 3 }, creds.bearer_token);
    } catch (e) {
      if (e instanceof ProviderError) return out(e);
      throw e;
    }
    observations.push(...res.items);
    last = res.quota;
    // since_id moves only when every page was read; after an interruption the next poll reads them again (ignored as repeats).
    if (res.interrupted) return out(res.interrupted);
    let newest = terms[term]?.since_id;
    for (const o of res.items) if (newer(o.externalId, newest)) newest = o.externalId;
    if (newest) terms[term] = { since_id: newest };
  }
  return out();
}

/** Reddit: an app-only token, then each term in each subreddit, newest first, until a post already seen. */
async function pollReddit(deps: WorkerDeps, ctx: ProviderContext, conn: Row, creds: Record<string, string>, options: Record<string, any>, terms: Record<string, TermCursor>): Promise<Outcome> {
  const reddit = new RedditClient(ctx, { authBaseUrl: options.auth_base_url ?? deps.config.SOCIAL_REDDIT_AUTH_URL, userAgent: options.user_agent });
  const observations: Observation[] = [];
  let last: QuotaState | undefined;
  const out = (error?: ProviderError): Outcome => ({ observations, terms, quota: last ? { last: quotaJson(last) } : (conn.quota as Record<string, unknown>), error, notBefore: last && spent(last) });
  try {
    const { accessToken } = await reddit.clientCredentialsToken(creds.client_id, creds.client_secret);
    for (const term of conn.terms) {
      for (const subreddit of options.subreddits as string[]) {
        const key = `r/${subreddit}:${term}`;
        const seenUntil = terms[key]?.newest_at ? Date.parse(terms[key].newest_at!) : 0;
        let newest = seenUntil;
        let after: string | undefined;
        for (let p = 0; p < (options.max_pages ?? 2); p++) {
          const page = await reddit.searchSubreddit({ subreddit, query: term, topic: term, sort: "new", t: "day", after }, accessToken);
          last = page.quota;
          const fresh = page.items.filter((o) => o.observedAt.getTime() > seenUntil);
          observations.push(...fresh);
          for (const o of fresh) newest = Math.max(newest, o.observedAt.getTime());
          if (fresh.length < page.items.length || !page.next) break;
          after = page.next;
        }
        if (newest > 0) terms[key] = { newest_at: new Date(newest).toISOString() };
      }
    }
  } catch (e) {
    if (e instanceof ProviderError) return out(e);
    throw e;
  }
  return out();
}

/**
 * YouTube: one search page per term (videos published in the last published_within_days days) plus their statistics.
 * A video's engagement is a running total, so the signal is the increase since the last reading kept in the cursor,
 * with id `${videoId}@${hour}` (the hour it was measured, UTC): at most one signal per video and hour. A video seen
 * for the first time counts its whole total (it is recent). A poll within an hour that already has a signal for the
 * video emits nothing and keeps the old reading, so the next hour carries the whole increase. Units are counted by a
 * QuotaLedger whose snapshot is kept in `quota.ledger`, so the count survives restarts and is shared by every worker
 * that polls this connection.
 */
async function pollYouTube(ctx: ProviderContext, conn: Row, creds: Record<string, string>, options: Record<string, any>, terms: Record<string, TermCursor>, now: Date): Promise<Outcome> {
  const ledger = new QuotaLedger();
  const saved = (conn.quota as { ledger?: QuotaSnapshot }).ledger;
  if (saved) ledger.restore(saved);
  const yt = new YouTubeClient(ctx, { apiKey: creds.api_key, ledger, now: () => now });
  const observations: Observation[] = [];
  let last: { search: QuotaState; videos: QuotaState } | undefined;
  const out = (error?: ProviderError): Outcome => ({
    observations, terms, error,
    quota: { ledger: ledger.snapshot(), last: last ? { search: quotaJson(last.search), videos: quotaJson(last.videos) } : ((conn.quota as any).last ?? null) },
  });
  const days = options.published_within_days ?? 2;
  const hour = hourOf(now);
  for (const term of conn.terms) {
    let page;
    try {
      page = await yt.topicMomentum({ q: term, publishedAfter: new Date(now.getTime() - days * 86_400_000), regionCode: options.region_code, observedAt: now });
    } catch (e) {
      if (e instanceof ProviderError) return out(e);
      throw e;
    }
    last = page.quota;
    const videos = { ...terms[term]?.videos };
    for (const o of page.items) {
      const prev = videos[o.externalId];
      const delta = prev ? o.count - prev.total : o.count;
      if (prev && prev.hour === hour) { prev.seen = now.toISOString(); continue; }
      if (delta > 0) {
        observations.push({ ...o, externalId: `${o.externalId}@${hour}`, count: delta });
        videos[o.externalId] = { total: o.count, hour, seen: now.toISOString() };
      } else {
        videos[o.externalId] = { total: o.count, hour: prev?.hour ?? null, seen: now.toISOString() };
      }
    }
    // Forget videos not seen for longer than they can still be found.
    for (const [id, v] of Object.entries(videos)) if (Date.parse(v.seen) < now.getTime() - (days + 1) * 86_400_000) delete videos[id];
    terms[term] = { videos };
  }
  return out();
}

/** Merges fields into one of the connection's recorded actions. */
async function updateAction(deps: WorkerDeps, connectionId: string, actionId: string, patch: Partial<SocialAction>) {
  const full = { completed_at: patch.status === "retrying" ? null : new Date().toISOString(), ...patch };
  await deps.db.$pool.query(
    `UPDATE social_connections SET cursor = jsonb_set(cursor, '{actions}', (
       SELECT coalesce(jsonb_agg(CASE WHEN a->>'id' = $2 THEN a || $3::jsonb ELSE a END ORDER BY n), '[]'::jsonb)
         FROM jsonb_array_elements(coalesce(cursor->'actions', '[]'::jsonb)) WITH ORDINALITY t(a, n)))
      WHERE id = $1`,
    [connectionId, actionId, JSON.stringify(full)],
  );
}

/** X replies and Google Trends validations: the input is on the recorded action; the outcome is written back to it. */
async function runAction(deps: WorkerDeps, conn: Row, action: "reply" | "validate", actionId: string) {
  const recorded = ((conn.cursor as Cursor).actions ?? []).find((a) => a.id === actionId);
  if (!recorded || (recorded.status !== "queued" && recorded.status !== "retrying")) return { skipped: "action not queued (done, rejected or awaiting approval)" };
  if (conn.status === "needs_reauth") {
    await updateAction(deps, conn.id, actionId, { status: "failed", error: `connection needs new credentials: ${conn.lastError ?? ""}`.trim() });
    return { skipped: "needs_reauth" };
  }
  const creds = credentialsOf(deps, conn);
  const ctx = context(deps, baseUrlOf(deps, conn));
  const options = conn.options as Record<string, any>;
  try {
    if (action === "reply") {
      const input = recorded.input as { in_reply_to_id: string; text: string };
      if (!creds.user_token) throw new ProviderError("x", "unauthorized", "reply: the connection has no user_token");
      const r = await new XClient(ctx).reply({ inReplyToId: input.in_reply_to_id, text: input.text }, creds.user_token);
      await updateAction(deps, conn.id, actionId, { status: "succeeded", result: { post_id: r.id } });
      return { posted: r.id };
    }
    const term = String(recorded.input.term);
    const r = await new GoogleTrendsClient(ctx).validateMomentum(
      { term, geo: options.geo, recentDays: options.recent_days ?? 7, baselineDays: options.baseline_days ?? 28 }, creds.access_token, TRENDS_POLL);
    const result = {
      term, verdict: r.verdict, ratio: r.ratio === Infinity ? "Infinity" : r.ratio, recent_mean: r.recentMean, baseline_mean: r.baselineMean,
      points: r.points.length, reason: r.reason,
    };
    await updateAction(deps, conn.id, actionId, { status: "succeeded", result });
    return result;
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    if (e.kind === "rate_limited") {
      // Not sent (or not accepted): try again once the limit resets.
      const delay = Math.max(1000, e.detail.retryAfterMs ?? 60_000);
      await updateAction(deps, conn.id, actionId, { status: "retrying", error: e.message });
      await deps.queues.add(QUEUES.socialPoll, { connection_id: conn.id, action, action_id: actionId }, { delay, jobId: `${action}-${actionId}-${Date.now()}` });
      return { retrying: true };
    }
    await updateAction(deps, conn.id, actionId, { status: "failed", error: e.message });
    if (e.kind === "unauthorized") {
      const { count } = await deps.db.socialConnection.updateMany({
        where: { id: conn.id, credentialsCiphertext: conn.credentialsCiphertext, NOT: { status: "needs_reauth" } },
        data: { status: "needs_reauth", lastError: e.message, nextPollAt: null },
      });
      if (count) {
        await deps.db.accountEvent.create({
          data: { id: newId("evt"), accountId: conn.accountId, type: "connector.needs_reauth", data: { connection_id: conn.id, provider: conn.provider, reason: e.message } },
        });
      }
    }
    return { failed: e.message };
  }
}
