import { z } from "zod";
import { pageCursor, pageLimit } from "./common.ts";

// The team-chat connector's responses. Its request bodies (the channel selection and the
// settings) are the chat provider's manifest schemas (`schemas.selection`, `schemas.settings`), so they live with
// the provider; the channel list's cursor is the provider's own, sealed by the gateway (only its own next_cursor is accepted).

export const ChatChannelsQuery = z.object({
  limit: pageLimit({ limit: 100, max: 200 }),
  cursor: pageCursor("opaque"),
});

export const ChatChannel = z
  .object({
    id: z.string(),
    name: z.string(),
    is_private: z.boolean(),
    is_member: z.boolean().meta({ description: "The app's bot is in the channel (a public one it is not in is joined when saved)" }),
  })
  .meta({ id: "ChatChannel" });
export type ChatChannel = z.infer<typeof ChatChannel>;

export const ChatChannelList = z
  .object({
    data: z.array(ChatChannel),
    next_cursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last page" }),
  })
  .meta({ id: "ChatChannelList", description: "Channels the app can see (public and private, archived ones left out)" });

export const ChatProvider = z
  .object({
    id: z.string().meta({ description: "The provider id routing rules name (`provider`)" }),
    display_name: z.string(),
    connected: z.boolean().meta({ description: "The account has a connection to it that needs no new authorization" }),
    configured: z.boolean().meta({ description: "This server has the provider's OAuth client (id and secret): false means GET …/auth answers 501 `provider_not_configured`" }),
    base_path: z.string().meta({ description: "Where its routes are: `auth`, `connection`, `channels`, `save-channel`, `channel`, `settings`, `interactivity`" }),
    channel_id_hint: z.string().meta({ description: "How its channel ids look, for a person who types one" }),
  })
  .meta({ id: "ChatProvider" });

export const ChatProviderList = z
  .object({ data: z.array(ChatProvider) })
  .meta({ id: "ChatProviderList", description: "The team-chat providers this service posts operator items to" });

export const ChatSavedChannel = z
  .object({
    channel_id: z.string(),
    channel_name: z.string(),
    is_private: z.boolean(),
    joined: z.boolean().meta({ description: "The bot joined the (public) channel just now" }),
  })
  .meta({ id: "ChatSavedChannel", description: "The alerts channel: operator items are posted there" });
export type ChatSavedChannel = z.infer<typeof ChatSavedChannel>;

/** The alerts channel as stored (GET reads it back; `joined` belongs to the save's answer only). */
export const ChatChannelSelection = ChatSavedChannel.omit({ joined: true })
  .meta({ id: "ChatChannelSelection", description: "The saved alerts channel" });

/** What an interactivity request is answered with when nothing could be done (shown only to the presser). */
export const ChatInteractionReply = z
  .object({ text: z.string() }).catchall(z.unknown())
  .meta({ id: "ChatInteractionReply" });

// Slack text escaping, shared by the app's Slack cards and the webhook body-template preset: trend text is data, not
// markup, so it can never carry a mention (<!channel>, <@U…>) or a disguised link (<https://…|label>).

/** Slack's three control characters in text (https://docs.slack.dev/messaging/formatting-message-text#escaping). */
export const escapeMrkdwn = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A URL made safe inside `<url|label>`: a `|` or `>` in it would end the URL early and let the rest be the label. */
export const escapeSlackUrl = (url: string): string =>
  url.replace(/\|/g, "%7C").replace(/</g, "%3C").replace(/>/g, "%3E").replace(/&/g, "&amp;");
