import { z } from "zod";
import { documentedEnum, Timestamp } from "./common.ts";

// Social and search connectors: the response bodies shared by every provider under
// /api/integrations/social/{provider}/... Each provider's request bodies (its connection's credentials and options,
// its actions' inputs) live in its own folder (packages/connectors/social/src/<provider>/schemas.ts).

const ProviderId = z.string().meta({ description: "A social provider id from GET /api/integrations/social/providers" });
const QuotaProject = z.string().nullable().meta({
  description: "The provider quota this connection draws on together with any other connection showing the same value, or null when its " +
    "quota is its own. YouTube: the Google Cloud project, `project:<id or number>` from `options.project`, else `key:<digest of the API key>` " +
    "(Google does not tell an API key's project; connections with the same key share it)",
});

export const SOCIAL_CONNECTION_STATUSES = {
  active: "polled on schedule",
  needs_reauth: "the provider refused the credentials; not polled until they are replaced (PUT the connection again)",
  rate_limited: "the provider's rate limit was reached; polled again at next_poll_at",
  quota_exhausted: "the daily quota is spent; polled again when it resets (next_poll_at)",
  error: "the provider refused our request (e.g. an unknown subreddit); not polled until the connection is changed",
} as const;
export const SocialConnectionStatusEnum = documentedEnum(SOCIAL_CONNECTION_STATUSES);

export const SocialConnection = z
  .object({
    id: z.string(),
    provider: ProviderId,
    status: SocialConnectionStatusEnum,
    terms: z.array(z.string()),
    options: z.record(z.string(), z.unknown()),
    quota_project: QuotaProject,
    base_url: z.string().nullable(),
    last_error: z.string().nullable(),
    last_polled_at: Timestamp.nullable(),
    next_poll_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "SocialConnection", description: "A connector's configuration and state; its credentials are never returned" });

export const SocialAction = z
  .object({
    id: z.string(),
    action: z.string().meta({ description: "The action's name: one of the provider's `actions` in GET /api/integrations/social/providers" }),
    status: z.enum(["awaiting_approval", "queued", "retrying", "succeeded", "failed", "rejected"])
      .meta({ description: "X reply drafts start `awaiting_approval`; an approved or other action is `queued`, then `succeeded`/`failed`" }),
    input: z.record(z.string(), z.unknown()),
    result: z.record(z.string(), z.unknown()).nullable(),
    error: z.string().nullable(),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
  })
  .meta({ id: "SocialAction", description: "A queued connector action (reply, poll, validate) and its outcome" });

export const SocialConnectionStatus = z
  .object({
    connection_id: z.string(),
    provider: ProviderId,
    status: SocialConnectionStatusEnum,
    last_error: z.string().nullable(),
    terms: z.array(z.string()),
    last_polled_at: Timestamp.nullable(),
    next_poll_at: Timestamp.nullable(),
    quota: z.record(z.string(), z.unknown()).meta({ description: "Quota as last seen: `last` (limit, remaining, reset_at, cost) and, for YouTube, `ledger` (units its quota project spent per bucket today, Pacific time)" }),
    quota_project: QuotaProject,
    recent_observations: z.object({ hours: z.number().int(), count: z.number().int() }).meta({ description: "Signals this connector stored in the last `hours` hours" }),
    actions: z.array(SocialAction).meta({ description: "The most recent actions, newest first" }),
  })
  .meta({ id: "SocialConnectionStatus" });

export const SocialProviderList = z
  .object({
    data: z.array(z.object({
      id: ProviderId,
      display_name: z.string(),
      kind: z.literal("social"),
      polled: z.boolean().meta({ description: "Polled on the schedule; otherwise it only runs its actions" }),
      connection_path: z.string().meta({ description: "PUT the connection here; GET `status` next to it" }),
      connected: z.boolean().meta({ description: "The account has a connection to it (in any status); without one its `status` answers 404" }),
      actions: z.array(z.object({
        name: z.string(),
        path: z.string().meta({ description: "POST here to run the action" }),
        summary: z.string(),
        approval: z.boolean().meta({ description: "Drafted first, then approved or rejected by a person (`draft_id`, `decision`)" }),
      })),
    })),
  })
  .meta({ id: "SocialProviderList", description: "The social and search providers this service connects to" });

export type SocialConnection = z.infer<typeof SocialConnection>;
export type SocialAction = z.infer<typeof SocialAction>;
