import { clipText, JOB_PAYLOADS, QUEUES, Signal, SIGNAL_TEXT_MAX, type JobPayload, type SocialAction } from "@trendgate/contracts";
import { baseUrlOf, providerRequest } from "@trendgate/connector-core";
import {
  ProviderError, type PollOutcome, type RunAction, type SocialConnectionState, type SocialConnector, type SocialContext,
} from "@trendgate/connector-social";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { insertSignals, loadSocialQuotaProject, recordAccountEvents, rotateSocialCredentials, saveSocialQuotaProject, type Prisma } from "@trendgate/db";
import { releaseLock, tryLock } from "@trendgate/queues";
import { deferJob } from "@trendgate/delivery";
import type { ProcessorFactory, WorkerDeps } from "./types.ts";

// Social and search connectors (the registry's social providers: polled ones, and actions run on demand). One job
// scheduler (kept in place by every worker that runs this queue: ../schedulers/index.ts) ticks every
// SOCIAL_POLL_INTERVAL_SECONDS for the whole fleet; the tick claims the connections that are due (status active,
// rate_limited or quota_exhausted, next_poll_at <= now) by pushing their next_poll_at forward by a lease, and
// queues one {connection_id} job each. That job runs the provider's poll, stores the observations as signals and
// sets the next poll time from the outcome:
//   success           -> active, next poll after the interval (or at the provider's window reset if it is spent)
//   rate_limited      -> rate_limited, next poll after the provider's retry time
//   quota_exhausted   -> quota_exhausted, next poll when the quota resets (YouTube: midnight Pacific)
//   unauthorized      -> needs_reauth, not polled until the credentials are replaced; an account event is recorded
//   unavailable       -> status kept, next poll after an exponential backoff (30 s doubling per failure, at most 1 h)
//   bad_request, not_found -> error, not polled until the connection is changed
//   a warning (part of the poll refused, e.g. one subreddit) -> status kept, the warning as last_error
// Signals: source = provider, id = the provider's item id, so a re-fetched item is ignored. An item found by
// several terms counts towards the first term that stored it.
// {connection_id, action, action_id} runs one of the provider's actions (its input is on the recorded action); a
// "poll now" action is the same poll.

type Row = Prisma.SocialConnectionGetPayload<object>;
type SocialJob = JobPayload<typeof QUEUES.socialPoll>;
interface Cursor { terms?: Record<string, unknown>; failures?: number; resume_at?: number; reauth?: boolean; actions?: SocialAction[] }

const LEASE_SECONDS = 600; // a claimed connection is claimed again only if its job did not finish within this
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 3_600_000;
/** A poll that finds another poll of its connection running comes back this much later. */
const POLL_BUSY_WAIT_MS = 500;

/** The registered social provider of a connection, or undefined (a provider removed from the registry). */
const connectorOf = (registry: ConnectorRegistry, conn: Row) => registry.find("social", conn.provider);

export const socialPoll: ProcessorFactory = {
  queue: QUEUES.socialPoll,
  create(deps) {
    const { db, logger } = deps;
    return {
      async process(job, token) {
        const data = JOB_PAYLOADS[QUEUES.socialPoll].parse(job.data);
        if (!data.connection_id) return tick(deps);
        const conn = await db.socialConnection.findUnique({ where: { id: data.connection_id } });
        if (!conn) return { skipped: "connection deleted" };
        const connector = connectorOf(deps.registry, conn);
        const action = data.action && connector?.actions.find((a) => a.name === data.action);
        if (!connector || (data.action && !action)) {
          const why = connector ? `${connector.manifest.displayName} has no action ${data.action}` : `provider ${conn.provider} is not registered`;
          if (data.action_id) await updateAction(deps, conn.id, data.action_id, { status: "failed", error: why });
          return { skipped: why };
        }
        const runs = !!action && action.kind === "run";
        if (!runs && (conn.status === "needs_reauth" || conn.status === "error")) {
          if (data.action_id) await updateAction(deps, conn.id, data.action_id, { status: "failed", error: `not polled: connection status is ${conn.status}` });
          return { skipped: conn.status };
        }
        if (data.action && !runs && (conn.status === "rate_limited" || conn.status === "quota_exhausted") && conn.nextPollAt && conn.nextPollAt > new Date()) {
          // "Poll now" while the provider's window is spent would only spend more of it (and a token request each time).
          const why = `not polled: ${conn.status.replace("_", " ")} until ${conn.nextPollAt.toISOString()}, when the scheduled poll runs`;
          if (data.action_id) await updateAction(deps, conn.id, data.action_id, { status: "failed", error: why });
          return { skipped: why };
        }
        // One job per connection at a time, fleet-wide (a Redis lock): two polls at once would both read the same
        // cursor and quota ledger and the last to finish would overwrite the other's (searches spent but not counted);
        // an action may rotate the credentials, which a poll running meanwhile would then fail to record against.
        const lockKey = `${deps.config.QUEUE_PREFIX}:social:poll:${conn.id}`;
        const owner = `${job.id}:${Date.now()}`;
        const redis = deps.queues.connection;
        if (!(await tryLock(redis, lockKey, owner, LEASE_SECONDS * 1000))) return deferJob(job, token, POLL_BUSY_WAIT_MS);
        let result;
        try {
          const current = await db.socialConnection.findUnique({ where: { id: conn.id } }); // as the last job left it
          if (!current) return { skipped: "connection deleted" };
          if (runs) return await runAction(deps, current, connector, action as RunAction, data.action_id!);
          const project = connector.quotaProject?.(JSON.parse(deps.secrets.open(current.credentialsCiphertext)) as Record<string, string>, current.options as Record<string, any>);
          if (project === undefined) result = await poll(deps, current, connector);
          else {
            // Connections drawing on one provider quota (a YouTube Cloud project) poll one at a time too: each starts
            // from the shared ledger the last one left, so together they never spend more than the project has.
            const projectKey = `${deps.config.QUEUE_PREFIX}:social:quota:${conn.provider}:${project}`;
            if (await tryLock(redis, projectKey, owner, LEASE_SECONDS * 1000)) {
              try {
                result = await poll(deps, current, connector, project);
              } finally {
                await releaseLock(redis, projectKey, owner).catch((err) => logger.warn({ connection_id: conn.id, err: String(err) }, "quota project lock not released; it lapses"));
              }
            }
          }
        } finally {
          await releaseLock(redis, lockKey, owner).catch((err) => logger.warn({ connection_id: conn.id, err: String(err) }, "poll lock not released; it lapses"));
        }
        if (!result) return deferJob(job, token, POLL_BUSY_WAIT_MS); // another connection of the quota project was polling
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
  // next_poll_at is a timestamp without time zone holding UTC (Prisma's convention), hence AT TIME ZONE 'UTC'. "Due"
  // is judged on the workers' clock, the one that wrote next_poll_at, not the database's.
  const at = Date.now();
  const { rows } = await db.$pool.query<{ id: string }>(
    `UPDATE social_connections SET next_poll_at = ($2::timestamptz AT TIME ZONE 'UTC') + $1 * interval '1 second'
      WHERE id IN (SELECT id FROM social_connections
                    WHERE status IN ('active', 'rate_limited', 'quota_exhausted') AND next_poll_at <= ($2::timestamptz AT TIME ZONE 'UTC')
                    ORDER BY next_poll_at LIMIT 1000 FOR UPDATE SKIP LOCKED)
      RETURNING id`, [LEASE_SECONDS, new Date(at).toISOString()]);
  for (const r of rows) await queues.add(QUEUES.socialPoll, { connection_id: r.id }, { jobId: `poll-${r.id}-${at}` });
  return { queued: rows.length };
}

function contextOf(deps: WorkerDeps, conn: Row, connector: SocialConnector, now: Date): SocialContext {
  const env = deps.config.PROVIDER_ENV;
  return {
    baseUrl: conn.baseUrl ?? baseUrlOf(connector.manifest, env), env, now, request: providerRequest(env),
    saveCredentials: (credentials) => rotateSocialCredentials(deps.db, conn.id, conn.credentialsCiphertext, deps.secrets.seal(JSON.stringify(credentials))),
  };
}

function stateOf(deps: WorkerDeps, conn: Row): SocialConnectionState {
  return {
    id: conn.id, terms: conn.terms, options: conn.options as Record<string, any>, quota: conn.quota as Record<string, any>,
    credentials: JSON.parse(deps.secrets.open(conn.credentialsCiphertext)) as Record<string, string>,
    cursor: { ...(conn.cursor as Cursor).terms },
    resumeAt: (conn.cursor as Cursor).resume_at,
  };
}

/**
 * Runs the provider's poll, stores the signals and records the outcome on the connection (and on its quota project,
 * whose lock the caller holds).
 */
async function poll(deps: WorkerDeps, conn: Row, connector: SocialConnector, project?: string) {
  const now = new Date();
  const cursor = conn.cursor as Cursor;
  const options = conn.options as Record<string, any>;
  if (!connector.poll) return { stored: 0, observations: 0, skipped: "not polled" };
  const state = stateOf(deps, conn);
  if (project !== undefined) state.sharedQuota = await loadSocialQuotaProject(deps.db, conn.provider, project);
  let outcome: PollOutcome;
  try {
    outcome = await connector.poll(contextOf(deps, conn, connector, now), state);
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    outcome = { observations: [], cursor: { ...cursor.terms }, quota: conn.quota as Record<string, unknown>, error: e, resumeAt: cursor.resume_at };
  }
  // Stored even if the connection changed meanwhile: what was spent was spent from the project.
  if (project !== undefined && outcome.sharedQuota) await saveSocialQuotaProject(deps.db, conn.provider, project, outcome.sharedQuota);

  const category = (options.category as string | undefined) ?? `social/${conn.provider.replaceAll("_", "-")}`;
  const signals: Signal[] = [];
  for (const o of outcome.observations) {
    const s = Signal.safeParse({
      id: o.externalId, source: conn.provider, topic: o.topic, category, count: Math.max(0, Math.round(o.count)),
      ...(o.sentiment === undefined ? {} : { sentiment: o.sentiment }), observed_at: o.observedAt.toISOString(),
      ...(o.link && o.link.length <= 2000 ? { link: o.link } : {}),
      ...(o.text?.trim() ? { text: clipText(o.text.trim(), SIGNAL_TEXT_MAX) } : {}),
    });
    if (s.success) signals.push(s.data);
  }
  const stored = await insertSignals(deps.db, conn.accountId, signals, deps.config.DETECTION_BUCKET_SECONDS);

  const interval = deps.config.SOCIAL_POLL_INTERVAL_SECONDS * 1000;
  let status = "active";
  let lastError: string | null = outcome.warning ?? null;
  let next: Date | null = new Date(Math.max(now.getTime() + interval, outcome.notBefore?.getTime() ?? 0));
  let failures = 0;
  let quota = outcome.quota;
  const e = outcome.error;
  if (e) {
    lastError = e.message;
    if (e.kind === "rate_limited") {
      status = "rate_limited";
      next = new Date(Date.now() + Math.max(1000, e.detail.retryAfterMs ?? interval));
      quota = spent(quota, next);
    } else if (e.kind === "quota_exhausted") {
      status = "quota_exhausted";
      next = e.detail.resetAt ?? new Date(Date.now() + 3_600_000);
    } else if (e.kind === "unauthorized") {
      status = "needs_reauth";
      next = null;
    } else if (e.kind === "bad_request" || e.kind === "not_found") {
      status = "error";
      next = null;
    } else {
      status = conn.status; // unavailable: keep the status, back off
      failures = (cursor.failures ?? 0) + 1;
      next = new Date(Date.now() + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (failures - 1)));
    }
  }

  // Refused credentials are remembered until a poll succeeds with new ones: that poll tells the account it recovered.
  const reauth = status === "needs_reauth" || (cursor.reauth === true && !!e);
  // Only if the credentials were not replaced meanwhile (a PUT resets the status and polls at once).
  const { rowCount } = await deps.db.$pool.query(
    `UPDATE social_connections
        SET status = $2, last_error = $3, next_poll_at = ($4::timestamptz AT TIME ZONE 'UTC'), last_polled_at = ($5::timestamptz AT TIME ZONE 'UTC'),
            quota = $6::jsonb, cursor = cursor || jsonb_build_object('terms', $7::jsonb, 'failures', $8::int, 'resume_at', $10::int, 'reauth', $11::boolean),
            updated_at = (now() AT TIME ZONE 'UTC')
      WHERE id = $1 AND credentials_ciphertext = $9`,
    [conn.id, status, lastError, next?.toISOString() ?? null, now.toISOString(), JSON.stringify(quota), JSON.stringify(outcome.cursor), failures, conn.credentialsCiphertext,
      outcome.resumeAt ?? null, reauth],
  );
  if (rowCount && status === "needs_reauth" && conn.status !== "needs_reauth") await recordNeedsReauth(deps, conn, lastError);
  if (rowCount && cursor.reauth && !reauth && !e) {
    await recordAccountEvents(deps.db, [{ accountId: conn.accountId, type: "connector.recovered", data: { connection_id: conn.id, provider: conn.provider } }]);
  }
  return { stored, observations: outcome.observations.length, status, error: lastError };
}

/**
 * The recorded window after a 429: nothing remains until the provider's retry time. The window read before the 429
 * (or on an earlier poll) would otherwise still show requests left while the connection waits.
 */
function spent(quota: Record<string, unknown>, until: Date): Record<string, unknown> {
  const last = quota.last as Record<string, unknown> | null | undefined;
  if (!last || typeof last !== "object" || !("remaining" in last)) return quota;
  return { ...quota, last: { ...last, remaining: 0, reset_at: until.toISOString(), cost: 0 } };
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

/** Runs one of the provider's actions: the input is on the recorded action; the outcome is written back to it. */
async function runAction(deps: WorkerDeps, conn: Row, connector: SocialConnector, action: RunAction, actionId: string) {
  const recorded = ((conn.cursor as Cursor).actions ?? []).find((a) => a.id === actionId);
  if (!recorded || (recorded.status !== "queued" && recorded.status !== "retrying")) return { skipped: "action not queued (done, rejected or awaiting approval)" };
  if (conn.status === "needs_reauth") {
    await updateAction(deps, conn.id, actionId, { status: "failed", error: `connection needs new credentials: ${conn.lastError ?? ""}`.trim() });
    return { skipped: "needs_reauth" };
  }
  try {
    const result = await action.run(contextOf(deps, conn, connector, new Date()), stateOf(deps, conn), recorded.input);
    await updateAction(deps, conn.id, actionId, { status: "succeeded", result });
    return result;
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    if (e.kind === "rate_limited") {
      // Not sent (or not accepted): try again once the limit resets.
      const delay = Math.max(1000, e.detail.retryAfterMs ?? 60_000);
      await updateAction(deps, conn.id, actionId, { status: "retrying", error: e.message });
      await deps.queues.add(QUEUES.socialPoll, { connection_id: conn.id, action: action.name as SocialJob["action"], action_id: actionId }, { delay, jobId: `${action.name}-${actionId}-${Date.now()}` });
      return { retrying: true };
    }
    // A refused write is the action's failure only: the credential it used (X's user token, which lapses after two
    // hours) is not the one reads use, so polling goes on and the connection keeps its status.
    const error = e.kind === "unauthorized" ? `${e.message} (the action's credentials were refused: PUT the connection with new ones; polling continues)` : e.message;
    await updateAction(deps, conn.id, actionId, { status: "failed", error });
    return { failed: error };
  }
}

async function recordNeedsReauth(deps: WorkerDeps, conn: Row, reason: string | null) {
  await recordAccountEvents(deps.db, [{ accountId: conn.accountId, type: "connector.needs_reauth", data: { connection_id: conn.id, provider: conn.provider, reason } }]);
}
