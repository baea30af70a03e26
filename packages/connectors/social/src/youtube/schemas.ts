import { z } from "zod";
import { storableText } from "@trendgate/contracts";
import { category, ProviderUrl, secret, terms } from "../connection-fields.ts";

// YouTube's connection body (PUT …/youtube/connection).

export const YouTubeConnectionBody = z
  .object({
    credentials: z.object({ api_key: secret.meta({ description: "YouTube Data API v3 key" }) }).strict(),
    terms: terms(1),
    options: z.object({
      category,
      published_within_days: z.number().int().min(1).max(30).default(2).meta({ description: "Only videos published this recently are followed" }),
      region_code: z.string().check(storableText).regex(/^[A-Z]{2}$/).optional(),
      project: z.string().check(storableText).regex(/^(?:(?:[a-z0-9-]+\.)+[a-z]{2,}:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$|^\d{1,20}$/).optional().meta({
        description: "The Google Cloud project of the API key (its id or number, written the same way on every connection of that project): " +
          "Google counts the daily quota per project, so connections naming one project share one ledger. Unset: the key's own ledger " +
          "(shared by the connections that use the same key)",
      }),
    }).strict().default({ published_within_days: 2 }),
    base_url: ProviderUrl.nullable().optional(),
  })
  .strict()
  .meta({ id: "YouTubeConnectionBody" });

export interface YouTubeConnectionOptions { published_within_days?: number; region_code?: string; project?: string }
