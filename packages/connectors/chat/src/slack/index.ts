import type { ChatConnector } from "../kind.ts";
import { SlackChatClient } from "./client.ts";
import { slackInteractions } from "./interactions.ts";
import { manifest } from "./manifest.ts";
import { parseSlackMention } from "./schemas.ts";

export const slack = {
  manifest,
  client: (ctx) => new SlackChatClient(ctx),
  interactions: slackInteractions,
  parseMention: parseSlackMention,
  channelIdHint: "a channel id, e.g. C0FINANCE01",
} satisfies ChatConnector;

export { CHAT_SETTINGS_DEFAULTS, type ChatSettings } from "./schemas.ts";
