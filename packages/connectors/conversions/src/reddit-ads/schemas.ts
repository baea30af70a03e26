import { z } from "zod";
import { storableText, text } from "@trendgate/contracts";

// The request bodies of the community-ads routes while Reddit Ads is the provider.

/** Reddit ad account ids come with or without the `t2_` prefix; pixel ids look like `a2_…` (Events Manager). */
export const REDDIT_ACCOUNT_ID = /^(?:t2_)?[a-z0-9]{4,32}$/i;
export const REDDIT_PIXEL_ID = /^a2_[a-z0-9]{4,32}$/i;

/** Our event names (lower snake) -> v3 tracking types (UPPER_SNAKE). Any other name is sent as CUSTOM with it as custom_event_name. */
export const TRACKING_TYPES = {
  page_visit: "PAGE_VISIT",
  view_content: "VIEW_CONTENT",
  search: "SEARCH",
  add_to_cart: "ADD_TO_CART",
  add_to_wishlist: "ADD_TO_WISHLIST",
  lead: "LEAD",
  purchase: "PURCHASE",
  sign_up: "SIGN_UP",
} as const;

export const EVENT_NAME = /^[A-Za-z][A-Za-z0-9 _.:-]{0,63}$/;

/** The v3 type of an event name: a standard one (any case, `SignUp`/`sign_up`/`SIGN_UP`), else CUSTOM with the name. */
export function trackingTypeOf(name: string): { tracking_type: string; custom_event_name?: string } {
  const key = name.trim().replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/[\s-]+/g, "_").toLowerCase();
  const known = (TRACKING_TYPES as Record<string, string>)[key];
  if (known) return { tracking_type: known };
  const custom = name.trim().replace(/^custom:/i, "");
  return { tracking_type: "CUSTOM", custom_event_name: custom };
}

const EventName = text({ min: 1, max: 64, trim: true })
  .regex(EVENT_NAME, "an event name: purchase, lead, sign_up, add_to_cart, add_to_wishlist, page_visit, view_content, search, or your own name (sent as CUSTOM)");

export const CommunityAdsSelectionBody = z
  .object({
    account_id: text({ min: 1, max: 40, trim: true }).regex(REDDIT_ACCOUNT_ID, "a Reddit ad account id such as t2_abc123 or abc123")
      .meta({ description: "The Reddit ad account (Business Manager), with or without `t2_`", example: "t2_abc123" }),
    pixel_id: text({ min: 1, max: 40, trim: true }).regex(REDDIT_PIXEL_ID, "a Reddit pixel id such as a2_abc123 (Events Manager)")
      .meta({ description: "The pixel conversion events are sent to (Events Manager)", example: "a2_abc123" }),
    event_name: EventName.meta({ description: "The default event name of pushes that name none: a standard type (`purchase`, `lead`, `sign_up`, ...) or a custom name", example: "purchase" }),
  })
  .strict()
  .meta({ id: "CommunityAdsSelectionBody" });

export const CommunityAdsTokenBody = z
  .object({
    access_token: text({ min: 20, max: 4096, trim: true }).regex(/^[\x21-\x7e]+$/, "a token (printable characters, no spaces)")
      .meta({ description: "A conversion access token from Reddit's Events Manager (instead of authorizing in the browser)" }),
  })
  .strict()
  .meta({ id: "CommunityAdsTokenBody" });

const Hashable = (max: number) => text({ min: 1, max, trim: true });

/** Epoch ms from an ISO 8601 time or a Unix time (seconds or milliseconds). */
const EventAt = z.union([
  z.string().check(storableText).datetime({ offset: true }).transform((s) => Date.parse(s)),
  z.number().int().positive().transform((n) => (n < 1e11 ? n * 1000 : n)),
]);

const Product = z.object({
  id: text({ min: 1, max: 128 }).optional(),
  name: text({ min: 1, max: 256 }).optional(),
  category: text({ min: 1, max: 256 }).optional(),
}).strict();

export const CommunityAdsPushData = z
  .object({
    conversion_id: text({ min: 1, max: 256, trim: true }).optional()
      .meta({ description: "Your id of the conversion (an order id). Events are de-duplicated on it here and at Reddit (use the pixel's value too). Default: this push's id" }),
    event_at: EventAt.optional().meta({ description: "When it happened: ISO 8601 or Unix time; at most 7 days old, not in the future. Default: now" }),
    action_source: z.enum(["WEBSITE", "APP", "OTHER", "PHYSICAL_STORE"]).default("WEBSITE"),
    click_id: text({ min: 1, max: 512, trim: true }).optional().meta({ description: "The `rdt_cid` click id" }),
    email: Hashable(320).optional().meta({ description: "Sent as SHA-256 of the trimmed, lower-cased address" }),
    phone: Hashable(40).optional().meta({ description: "Sent as SHA-256 of the E.164 form (+ and digits)" }),
    external_id: Hashable(256).optional().meta({ description: "Your user id; sent as SHA-256 of the trimmed value" }),
    ip_address: Hashable(64).optional().meta({ description: "Sent as SHA-256 of the trimmed, lower-cased address" }),
    user_agent: text({ min: 1, max: 1024 }).optional().meta({ description: "Sent as is" }),
    uuid: text({ min: 1, max: 128 }).optional(),
    value: z.number().nonnegative().finite().optional().meta({ description: "In currency units (159.99)" }),
    currency: z.string().check(storableText).regex(/^[A-Z]{3}$/, "an ISO 4217 code such as USD").optional(),
    item_count: z.number().int().nonnegative().optional(),
    products: z.array(Product).max(100).optional(),
  })
  .strict();

export const CommunityAdsPushBody = z
  .object({
    event_name: EventName.optional().meta({ description: "Default: the selection's event_name" }),
    data: CommunityAdsPushData,
    test_id: text({ min: 1, max: 128, trim: true }).optional().meta({ description: "Test mode: the test id from Events Manager's test tool (test events are never batched with real ones)" }),
  })
  .strict()
  .meta({ id: "CommunityAdsPushBody" });
