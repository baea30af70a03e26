import { z } from "zod";
import { futureInstant, page, text, Timestamp } from "./common.ts";

export const CreateApiKeyBody = z
  .object({
    name: text({ min: 1, max: 100, trim: true }),
    expires_at: futureInstant.optional().meta({ description: "Optional expiry, in the future; after it the key answers 401" }),
  })
  .strict()
  .meta({ id: "CreateApiKeyBody" });

export const RotateApiKeyBody = z
  .object({
    grace_period_seconds: z
      .number()
      .int()
      .min(0)
      .max(30 * 24 * 3600)
      .default(24 * 3600)
      .meta({ description: "How long the old key stays valid (0 = revoke now; default 24 h; max 30 days)" }),
  })
  .strict()
  .meta({ id: "RotateApiKeyBody" });

export const RevokeApiKeyQuery = z.object({
  end_sessions: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .meta({ description: "Also revoke the console sessions this key created (default); `false` leaves them until they expire" }),
});

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: "Public start of the key, to recognise it; not a secret" }),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
    status: z.enum(["active", "expiring", "expired", "revoked"]),
  })
  .meta({ id: "ApiKey" });

export const ApiKeyWithSecret = ApiKey.extend({
  key: z.string().meta({ description: "The API key. Shown only in this response; store it now." }),
}).meta({ id: "ApiKeyWithSecret" });

export type ApiKey = z.infer<typeof ApiKey>;

export const ApiKeyList = page(ApiKey).meta({ id: "ApiKeyList" });
export const RotatedApiKey = ApiKeyWithSecret.extend({ previous_key: ApiKey }).meta({ id: "RotatedApiKey" });
