import { z } from "zod";
import { documentedEnum, Id, OutboundUrl, storableText, text, Timestamp } from "./common.ts";
import { CategoryPath } from "./signals.ts";

// Social and search connectors (X, Reddit, YouTube, Google Trends): request and response bodies of
// /api/integrations/social/{provider}/... Each provider has its own credentials and options; the rest is shared.

export const SOCIAL_PROVIDERS = ["x", "reddit", "youtube", "google_trends"] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];

export const SOCIAL_CONNECTION_STATUSES = {
  active: "polled on schedule",
  needs_reauth: "the provider refused the credentials; not polled until they are replaced (PUT the connection again)",
  rate_limited: "the provider's rate limit was reached; polled again at next_poll_at",
  quota_exhausted: "the daily quota is spent; polled again when it resets (next_poll_at)",
  error: "the provider refused our request (e.g. an unknown subreddit); not polled until the connection is changed",
} as const;
export const SocialConnectionStatusEnum = documentedEnum(SOCIAL_CONNECTION_STATUSES);

const secret = text({ min: 1, max: 4096, trim: true });
const ProviderUrl = OutboundUrl
  .meta({ description: "Overrides the provider's default API address (for proxies and tests)" });
const Term = text({ min: 1, max: 200, trim: true });
const terms = (min: number) =>
  z.array(Term).min(min).max(50).transform((t) => [...new Set(t)]).meta({ description: "Terms (search queries) to track; each becomes a topic of the produced signals" });
const category = CategoryPath.optional().meta({ description: "Category of the produced signals (default `social/<provider>`)" });

export const XConnectionBody = z
  .object({
    credentials: z.object({
      bearer_token: secret.meta({ description: "App-only bearer token: recent search" }),
      user_token: secret.optional().meta({ description: "User-context OAuth 2.0 token with tweet.write: needed for replies" }),
    }).strict(),
    terms: terms(1),
    options: z.object({
      category,
      max_pages: z.number().int().min(1).max(10).default(3).meta({ description: "Pages of recent search per term and poll (each page is billed)" }),
      page_size: z.number().int().min(10).max(100).default(100),
    }).strict().default({ max_pages: 3, page_size: 100 }),
    base_url: ProviderUrl.nullable().optional(),
  })
  .strict()
  .meta({ id: "XConnectionBody" });

export const SubredditName = z.string().check(storableText).regex(/^[A-Za-z0-9_]{2,21}$/, "a subreddit name: 2-21 letters, digits or _");
export const RedditConnectionBody = z
  .object({
    credentials: z.object({ client_id: secret, client_secret: secret }).strict().meta({ description: "An OAuth app's id and secret: app-only (client credentials) tokens for reads" }),
    terms: terms(1),
    options: z.object({
      subreddits: z.array(SubredditName).min(1).max(20).meta({ description: "Subreddits searched for each term" }),
      user_agent: text({ min: 10, max: 300, trim: true }).meta({ description: "Reddit throttles generic agents: `<platform>:<app id>:<version> (by /u/<user>)`" }),
      category,
      max_pages: z.number().int().min(1).max(10).default(2),
    }).strict(),
    base_url: ProviderUrl.nullable().optional(),
    auth_base_url: ProviderUrl.nullable().optional().meta({ description: "Overrides Reddit's token host (https://www.reddit.com)" }),
  })
  .strict()
  .meta({ id: "RedditConnectionBody" });

export const YouTubeConnectionBody = z
  .object({
    credentials: z.object({ api_key: secret.meta({ description: "YouTube Data API v3 key" }) }).strict(),
    terms: terms(1),
    options: z.object({
      category,
      published_within_days: z.number().int().min(1).max(30).default(2).meta({ description: "Only videos published this recently are followed" }),
      region_code: z.string().check(storableText).regex(/^[A-Z]{2}$/).optional(),
    }).strict().default({ published_within_days: 2 }),
    base_url: ProviderUrl.nullable().optional(),
  })
  .strict()
  .meta({ id: "YouTubeConnectionBody" });

export const GoogleTrendsConnectionBody = z
  .object({
    credentials: z.object({ access_token: secret.meta({ description: "OAuth token with scope https://www.googleapis.com/auth/searchtrends" }) }).strict(),
    terms: terms(0).default([]),
    options: z.object({
      category,
      geo: z.object({ type: text({ min: 1, max: 40 }), code: text({ min: 1, max: 20 }) }).strict().optional(),
      recent_days: z.number().int().min(1).max(90).default(7),
      baseline_days: z.number().int().min(3).max(365).default(28),
    }).strict().default({ recent_days: 7, baseline_days: 28 }),
    base_url: ProviderUrl.nullable().optional(),
  })
  .strict()
  .meta({ id: "GoogleTrendsConnectionBody" });

export const SOCIAL_CONNECTION_BODIES = {
  x: XConnectionBody,
  reddit: RedditConnectionBody,
  youtube: YouTubeConnectionBody,
  google_trends: GoogleTrendsConnectionBody,
} as const;

export const SocialConnection = z
  .object({
    id: z.string(),
    provider: z.enum(SOCIAL_PROVIDERS),
    status: SocialConnectionStatusEnum,
    terms: z.array(z.string()),
    options: z.record(z.string(), z.unknown()),
    base_url: z.string().nullable(),
    last_error: z.string().nullable(),
    last_polled_at: Timestamp.nullable(),
    next_poll_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "SocialConnection", description: "A connector's configuration and state; its credentials are never returned" });

export const SOCIAL_ACTIONS = ["poll", "reply", "validate"] as const;
export const SocialAction = z
  .object({
    id: z.string(),
    action: z.enum(SOCIAL_ACTIONS),
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
    provider: z.enum(SOCIAL_PROVIDERS),
    status: SocialConnectionStatusEnum,
    last_error: z.string().nullable(),
    terms: z.array(z.string()),
    last_polled_at: Timestamp.nullable(),
    next_poll_at: Timestamp.nullable(),
    quota: z.record(z.string(), z.unknown()).meta({ description: "Quota as last seen: `last` (limit, remaining, reset_at, cost) and, for YouTube, `ledger` (units spent per bucket today, Pacific time)" }),
    recent_observations: z.object({ hours: z.number().int(), count: z.number().int() }).meta({ description: "Signals this connector stored in the last `hours` hours" }),
    actions: z.array(SocialAction).meta({ description: "The most recent actions, newest first" }),
  })
  .meta({ id: "SocialConnectionStatus" });

// Response routing on X: draft a reply, then a person approves (queued, posted by a worker) or rejects it.
export const XReplyDraftBody = z
  .object({
    in_reply_to_id: z.string().check(storableText).regex(/^\d{1,19}$/, "an X post id (digits)"),
    text: text({ min: 1, max: 280, trim: true }),
  })
  .strict()
  .meta({ id: "XReplyDraft", description: "Draft a reply: stored awaiting approval, not posted" });
export const XReplyDecisionBody = z
  .object({ draft_id: Id, decision: z.enum(["approve", "reject"]) })
  .strict()
  .meta({ id: "XReplyDecision", description: "Approve (queue for posting) or reject a draft" });
export const XReplyBody = z.union([XReplyDraftBody, XReplyDecisionBody]).meta({ id: "XReplyBody" });

export const TrendsValidateBody = z.object({ term: Term }).strict().meta({ id: "TrendsValidateBody" });

export type SocialConnection = z.infer<typeof SocialConnection>;
export type SocialAction = z.infer<typeof SocialAction>;
