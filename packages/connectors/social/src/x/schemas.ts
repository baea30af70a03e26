import { z } from "zod";
import { storableText, text } from "@trendgate/contracts";
import { category, ProviderUrl, secret, terms } from "../connection-fields.ts";
import { draftDecision } from "../kind.ts";

/** Default daily read cap: one term at the default settings reads at most 300 posts a poll, 86,400 a day at 5-minute polls. */
export const X_DEFAULT_DAILY_POSTS = 10_000;

// X's request bodies: the connection (PUT …/x/connection) and a reply (POST …/x/reply).

export const XConnectionBody = z
  .object({
    credentials: z.object({
      bearer_token: secret.meta({ description: "App-only bearer token: recent search" }),
      user_token: secret.optional().meta({ description: "User-context OAuth 2.0 token with tweet.write: needed for replies (X issues it for two hours)" }),
      user_refresh_token: secret.optional().meta({
        description: "The refresh token X issued with it (scope offline.access): a reply after the two hours gets a new token first. " +
          "X rotates refresh tokens; the worker stores each new one, sealed",
      }),
      client_id: secret.optional().meta({ description: "The OAuth 2.0 client the user tokens were issued to (required with user_refresh_token)" }),
      client_secret: secret.optional().meta({ description: "That client's secret, for a confidential client (web app); omit for a public client" }),
    }).strict().superRefine((c, ctx) => {
      if (c.user_refresh_token && !c.client_id) ctx.addIssue({ code: "custom", path: ["client_id"], message: "required with user_refresh_token (the OAuth client the token was issued to)" });
    }),
    terms: terms(1),
    options: z.object({
      category,
      max_pages: z.number().int().min(1).max(10).default(3).meta({ description: "Pages of recent search per term and poll (each page is billed); more new posts are read by the next polls" }),
      page_size: z.number().int().min(10).max(100).default(100),
      max_posts_per_day: z.number().int().min(10).max(10_000_000).default(X_DEFAULT_DAILY_POSTS).meta({
        description: "Spend cap: posts read per UTC day over all terms (X bills reads per post). Once reached, polling pauses until midnight UTC (`quota_exhausted`)",
      }),
    }).strict().default({ max_pages: 3, page_size: 100, max_posts_per_day: X_DEFAULT_DAILY_POSTS }),
    base_url: ProviderUrl.nullable().optional(),
  })
  .strict()
  .meta({ id: "XConnectionBody" });

// Response routing on X: draft a reply, then a person approves (queued, posted by a worker) or rejects it.
export const XReplyDraftBody = z
  .object({
    in_reply_to_id: z.string().check(storableText).regex(/^\d{1,19}$/, "an X post id (digits)"),
    text: text({ min: 1, max: 280, trim: true }),
  })
  .strict()
  .meta({ id: "XReplyDraft", description: "Draft a reply: stored awaiting approval, not posted" });
export const XReplyDecisionBody = draftDecision("XReplyDecision");
export const XReplyBody = z.union([XReplyDraftBody, XReplyDecisionBody]).meta({ id: "XReplyBody" });

export interface XOptions { category?: string; max_pages?: number; page_size?: number; max_posts_per_day?: number }
