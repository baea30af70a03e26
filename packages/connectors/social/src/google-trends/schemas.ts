import { z } from "zod";
import { text } from "@trendgate/contracts";
import { category, ProviderUrl, secret, Term, terms } from "../connection-fields.ts";

// Google Trends' request bodies: the connection (PUT …/google_trends/connection) and a validation (POST …/validate).

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

export const TrendsValidateBody = z.object({ term: Term }).strict().meta({ id: "TrendsValidateBody" });

export interface GoogleTrendsOptions { geo?: { type: string; code: string }; recent_days?: number; baseline_days?: number }
