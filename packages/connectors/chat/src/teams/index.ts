import type { ChatConnector } from "../kind.ts";
import { TeamsChatClient } from "./client.ts";
import { teamsInteractions } from "./interactions.ts";
import { manifest } from "./manifest.ts";
import { parseTeamsMention } from "./schemas.ts";

export const teams: ChatConnector = {
  manifest,
  client: (ctx) => new TeamsChatClient(ctx),
  interactions: teamsInteractions,
  parseMention: parseTeamsMention,
  channelIdHint: "<team id>/<channel id>",
};

export { parseTeamsMention, TEAMS_CHANNEL_ID, TEAMS_MENTION } from "./schemas.ts";
