import { z } from "zod";
import { text } from "@trendgate/contracts";
import { category, ProviderUrl, secret, Term, terms } from "../connection-fields.ts";

// Google Trends' request bodies: the connection (PUT …/google_trends/connection) and a validation (POST …/validate).

export const GoogleTrendsConnectionBody = z
  .object({
    credentials: z.object({
      access_token: secret.optional().meta({ description: "OAuth access token with scope https://www.googleapis.com/auth/searchtrends (Google issues it for one hour)" }),
      refresh_token: secret.optional().meta({ description: "A refresh token for that scope, with the OAuth client that obtained it: a fresh access token is fetched for each validation" }),
      client_id: secret.optional(),
      client_secret: secret.optional(),
    }).strict().superRefine((c, ctx) => {
      if (c.refresh_token) {
        for (const k of ["client_id", "client_secret"] as const) if (!c[k]) ctx.addIssue({ code: "custom", path: [k], message: "required with refresh_token (the OAuth client the token was issued to)" });
      } else if (!c.access_token) ctx.addIssue({ code: "custom", path: ["access_token"], message: "give access_token, or refresh_token with client_id and client_secret" });
    }),
    terms: terms(0).default([]),
    options: z.object({
      category,
      geo: z.object({ type: text({ min: 1, max: 40 }), code: text({ min: 1, max: 20 }) }).strict().optional(),
      recent_days: z.number().int().min(1).max(90).default(7),
      baseline_days: z.number().int().min(3).max(365).default(28),
    }).strict().default({ recent_days: 7, baseline_days: 28 }),
    base_url: ProviderUrl.nullable().optional(),
    token_url: ProviderUrl.nullable().optional().meta({ description: "Overrides Google's token endpoint (https://oauth2.googleapis.com/token)" }),
  })
  .strict()
  .meta({ id: "GoogleTrendsConnectionBody" });

export const TrendsValidateBody = z.object({ term: Term }).strict().meta({ id: "TrendsValidateBody" });

export interface GoogleTrendsOptions { geo?: { type: string; code: string }; recent_days?: number; baseline_days?: number; token_url?: string }
