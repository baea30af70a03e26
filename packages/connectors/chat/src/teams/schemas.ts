import { z } from "zod";
import { text } from "@trendgate/contracts";
import type { ChatMention } from "../kind.ts";
import { ChatSettingsBody } from "../slack/schemas.ts";

// The chat routes' bodies while Teams is the chat provider. Settings are Slack's, field for field, except the
// critical mention, which names a Teams user, tag or the channel instead of Slack's `<!here>` syntax. A channel id
// is ours: `<team id>/<channel id>` (client.ts says why).

/** `<team GUID>/<Graph channel id>` (e.g. `19:abc…@thread.tacv2`); neither part ever holds a `/`. */
export const TEAMS_CHANNEL_ID = /^[0-9a-fA-F-]{36}\/19:[A-Za-z0-9_.=-]{1,160}@thread\.(?:tacv2|skype)$/;

/**
 * `channel`, `user:<AAD object id>` or `tag:<tag id>`, optionally followed by `|<name shown>` (Teams shows the text
 * inside `<at>…</at>`; default "channel", "user", "tag").
 */
export const TEAMS_MENTION = /^(?:channel|user:[0-9a-fA-F-]{36}|tag:[A-Za-z0-9+/=_:-]{1,120})(?:\|[^<>|&\n]{1,60})?$/;

/** A configured mention as a ChatMention (the operator's critical mention), or null when it is not one. */
export function parseTeamsMention(s: string | null | undefined): ChatMention | null {
  if (!s || !TEAMS_MENTION.test(s)) return null;
  const [what, name] = s.split("|");
  if (what === "channel") return { kind: "channel", id: "", name: name ?? "channel" };
  const [kind, id] = [what.slice(0, what.indexOf(":")), what.slice(what.indexOf(":") + 1)];
  return kind === "user" ? { kind: "user", id, name: name ?? "user" } : { kind: "group", id, name: name ?? "tag" };
}

export const TeamsSaveChannelBody = z
  .object({
    channel_id: text({ min: 40, max: 220, trim: true })
      .regex(TEAMS_CHANNEL_ID, "`<team id>/<channel id>` as GET /api/integrations/chat/channels lists it")
      .meta({ description: "The channel operator cards are posted to, as the channel list names it (`<team id>/<channel id>`). The Trendgate app must be installed in its team", example: "8d8e7c7e-1a2b-4c3d-9e8f-0a1b2c3d4e5f/19:4f1f2b6c9d8e4a3b@thread.tacv2" }),
  })
  .strict()
  .meta({ id: "TeamsSaveChannelBody" });

export const TeamsSettingsBody = ChatSettingsBody.safeExtend({
  critical_mention: text({ min: 1, max: 200, trim: true })
    .regex(TEAMS_MENTION, "`channel`, `user:<AAD object id>` or `tag:<tag id>`, optionally followed by `|<name shown>`")
    .nullable()
    .default(null)
    .meta({ description: "Who a critical card notifies: `channel`, `user:<AAD object id>` or `tag:<tag id>`, optionally `|<name shown>` (default `null`: nobody)" }),
}).meta({ id: "TeamsSettingsBody" });
