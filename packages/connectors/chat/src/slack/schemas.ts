import { z } from "zod";
import type { ChatMention } from "../kind.ts";
import { CategoryPath, RECOVERY_WINDOW_MINUTES, SENSITIVITIES, SENSITIVITY_MIN_SEVERITY, Severity, text, TRIGGER_WINDOW_MINUTES } from "@trendgate/contracts";

// The request bodies of the chat routes while Slack is the chat provider: which channel receives operator cards,
// and which trend events become operator items there. Defaults are applied when a field is left out, so a stored
// settings object is always complete.

/** A Slack conversation id a bot can post to: public (C…) or private (C…, or G… on older workspaces). */
export const SLACK_CHANNEL_ID = /^[CG][A-Z0-9]{8,20}$/;

/** The mentions a critical card may carry: `<!here>`, `<!channel>`, a user `<@U…>` or a user group `<!subteam^S…>`. */
export const SLACK_MENTION = /^(?:<!here>|<!channel>|<@[UW][A-Z0-9]{2,20}>|<!subteam\^S[A-Z0-9]{2,20}>)$/;

/** A `critical_mention` setting as a mention (`<!here>` and `<!channel>`: the channel). */
export function parseSlackMention(s: string | null): ChatMention | null {
  const m = s ? /^<(?:!(here|channel)|@([UW][A-Z0-9]+)|!subteam\^(S[A-Z0-9]+))>$/.exec(s) : null;
  if (!m) return null;
  return m[1] ? { kind: "channel", id: "" } : m[2] ? { kind: "user", id: m[2] } : { kind: "group", id: m[3] };
}

export const ChatSaveChannelBody = z
  .object({
    channel_id: text({ min: 1, max: 24, trim: true })
      .regex(SLACK_CHANNEL_ID, "a Slack channel id such as C0123456789 (from GET /api/integrations/chat/channels)")
      .meta({ description: "The channel operator cards are posted to. A public channel the bot is not in is joined; for a private channel, invite the bot first (`/invite @<bot>`)", example: "C0123456789" }),
  })
  .strict()
  .meta({ id: "ChatSaveChannelBody" });

export const CHAT_SETTINGS_DEFAULTS = {
  min_severity: "high",
  categories: [] as string[],
  velocity_alerts: true,
  critical_mention: null as string | null,
  renotify_minutes: null as number | null,
  trigger_window_minutes: 0,
  recovery_window_minutes: 0,
} as const;

export const ChatSettingsBody = z
  .object({
    min_severity: Severity.default(CHAT_SETTINGS_DEFAULTS.min_severity)
      .meta({ description: "Trend events at or above this severity become operator items (default `high`)" }),
    categories: z.array(CategoryPath).max(50).default([])
      .meta({ description: "Only trends in these categories or their sub-categories (`tech` matches `tech/ai`); default `[]`: every category" }),
    velocity_alerts: z.boolean().default(CHAT_SETTINGS_DEFAULTS.velocity_alerts)
      .meta({ description: "Whether a velocity change of an open item's trend updates its card (default `true`)" }),
    critical_mention: text({ min: 1, max: 40, trim: true })
      .regex(SLACK_MENTION, "one of <!here>, <!channel>, <@U…> (a user) or <!subteam^S…> (a user group)")
      .nullable()
      .default(null)
      .meta({ description: "Mention added to critical cards, e.g. `<!here>`, `<!channel>`, `<@U0123ABCD>`, `<!subteam^S0123ABCD>` (default `null`: none)" }),
    renotify_minutes: z.number().int().min(5).max(1440).nullable().default(null)
      .meta({ description: "Minutes after which an unacknowledged critical item is posted again in its thread, 5-1440 (default `null`: the server's OPERATOR_RENOTIFY_SECONDS)" }),
    trigger_window_minutes: z.number().int().min(TRIGGER_WINDOW_MINUTES.min).max(TRIGGER_WINDOW_MINUTES.max).default(CHAT_SETTINGS_DEFAULTS.trigger_window_minutes)
      .meta({ description: "A new item's card is posted this long after it opened, and only if a detection pass still found its trend anomalous then (default 0: at once); the item is in the queue meanwhile" }),
    recovery_window_minutes: z.number().int().min(RECOVERY_WINDOW_MINUTES.min).max(RECOVERY_WINDOW_MINUTES.max).default(CHAT_SETTINGS_DEFAULTS.recovery_window_minutes)
      .meta({ description: "A trend detected again less than this long after it ended opens (or reopens) no item (default 0: off)" }),
    sensitivity: z.enum(SENSITIVITIES).optional().meta({
      description: "Shorthand for min_severity, as webhook subscriptions name it: `high` = low and up (anomaly score >= 4.5), `normal` = medium and up (>= 7), " +
        "`low` = high and up (>= 10, the default). When given it sets min_severity; the stored settings show min_severity",
    }),
  })
  .strict()
  // A check that rewrites, not a transform: the manifest's schema stays an object schema (its fields are documented).
  .overwrite((s) => (s.sensitivity ? { ...s, min_severity: SENSITIVITY_MIN_SEVERITY[s.sensitivity], sensitivity: undefined } : s))
  .meta({ id: "ChatSettingsBody" });

export type ChatSettings = z.output<typeof ChatSettingsBody>;
