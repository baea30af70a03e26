import { z } from "zod";
import { Id, page, text, Timestamp } from "./common.ts";

// The web console's sessions: an API key creates a one-time link; the browser exchanges the link's token for an
// access token scoped to the account (docs/console.md).

export const CreateConsoleSessionBody = z
  .object({
    label: text({ max: 100, trim: true }).optional().meta({ description: "Who or what the link is for, shown in the list (e.g. the user's email)" }),
    link_minutes: z.number().int().min(1).max(60).default(15).meta({ description: "How long the link can be opened (default 15 minutes)" }),
    session_hours: z.number().int().min(1).max(24).default(8).meta({ description: "How long the session lasts once opened (default 8 hours)" }),
  })
  .strict()
  .meta({ id: "CreateConsoleSessionBody" });

export const ConsoleSession = z
  .object({
    id: z.string().meta({ example: "cs_01kaq3m2b4c5d6e7f8g9h0jkmn" }),
    label: z.string().nullable(),
    status: z.enum(["unopened", "open", "expired", "revoked"]),
    link_expires_at: Timestamp,
    opened_at: Timestamp.nullable(),
    expires_at: Timestamp.nullable().meta({ description: "When the opened session ends; null until it is opened" }),
    session_hours: z.number().int(),
    created_at: Timestamp,
  })
  .meta({ id: "ConsoleSession" });

export const ConsoleSessionWithLink = ConsoleSession.extend({
  url: z.string().meta({
    description: "The one-time link: opens the console for this account once, until link_expires_at. Shown only in this response; " +
      "hand it to the person (or load it in your product's iframe) and do not log it",
    example: "https://trendgate.example.com/console/?s=cs_01kaq3m2b4c5d6e7f8g9h0jkmn#token=tgcl_…",
  }),
}).meta({ id: "ConsoleSessionWithLink" });

export const ConsoleSessionList = page(ConsoleSession).meta({ id: "ConsoleSessionList" });
export const ConsoleSessionIdParam = z.object({ session_id: Id });
/** A console asset's content-hashed file name (e.g. `console-3f2a9c1b.js`). */
export const ConsoleAssetParam = z.object({
  name: text({ min: 1, max: 100 }).meta({ description: "The asset's content-hashed file name, as the console page links it" }),
});

export const ExchangeConsoleLinkBody = z
  .object({ token: text({ min: 1, max: 200 }).meta({ description: "The `#token=` part of the link" }) })
  .strict()
  .meta({ id: "ExchangeConsoleLinkBody" });

export const ConsoleAccess = z
  .object({
    access_token: z.string().meta({ description: "Send as `Authorization: Bearer <access_token>` (the stream: `?access_token=`)" }),
    session_id: z.string(),
    account_id: z.string(),
    expires_at: Timestamp,
  })
  .meta({ id: "ConsoleAccess" });

/** An origin that may frame the console: scheme, host and optional port, nothing else (CSP frame-ancestors source). */
export const FrameAncestor = text({ max: 200, trim: true })
  .regex(
    /^https:\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?$|^http:\/\/(localhost|127\.0\.0\.1)(:\d{1,5})?$/,
    "an origin such as https://app.example.com (https, or http only for localhost; no path)",
  )
  // A port is 1-65535; a wildcard covers one organisation's subdomains (*.example.com), never a whole top-level
  // domain (*.com would let any site on it frame the console).
  .refine((o) => { const port = /:(\d+)$/.exec(o)?.[1]; return port === undefined || (Number(port) >= 1 && Number(port) <= 65535); }, "the port must be 1-65535")
  .refine((o) => !o.startsWith("https://*.") || o.replace(/:\d+$/, "").slice("https://*.".length).split(".").length >= 2,
    "a wildcard needs at least two labels after it (https://*.example.com)");

export const ConsoleSettings = z
  .object({
    frame_ancestors: z.array(FrameAncestor).max(20).meta({
      description: "Origins whose pages may show the console in an iframe (Content-Security-Policy frame-ancestors); empty: none may",
    }),
  })
  .strict()
  .meta({ id: "ConsoleSettings" });

export type ConsoleSession = z.infer<typeof ConsoleSession>;
