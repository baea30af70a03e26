import type { WebClient } from "@slack/web-api";
import { ProviderError } from "@trendgate/connector-core";
import type { ChatChannel, ChatClient, ChatMention, ChatMessageRef, OperatorCard } from "../kind.ts";
import { cut, renderCard, SLACK_LIMITS } from "./blocks.ts";
import { slackCall } from "./errors.ts";
import { webClient } from "./web.ts";

// The chat client on one connection's bot token. One call per method, no retries and no pacing here: the outbox
// decides when to try again (a 429 comes back as rate_limited with Slack's Retry-After).

/** chat.postMessage codes for a channel that exists but takes no post from the app. */
const CHANNEL_CLOSED = new Set(["is_archived", "not_in_channel"]);

/** conversations.list accepts at most 1,000 per page (and may answer fewer). */
const MAX_PAGE = 1000;

type SlackConversation = { id?: string; name?: string; is_private?: boolean; is_member?: boolean; is_archived?: boolean };

const channelOf = (c: SlackConversation): ChatChannel => ({
  id: c.id ?? "",
  name: c.name ?? "",
  isPrivate: c.is_private === true,
  isMember: c.is_member === true,
  isArchived: c.is_archived === true,
});

/** Where Slack says it put the message; a success without a `ts` would leave a card we could never update. */
function refOf(r: { channel?: string; ts?: string }, channelId: string, what: string): ChatMessageRef {
  if (!r.ts) throw new ProviderError("slack", "unavailable", `${what}: the answer holds no message ts`, { status: 200, providerCode: "no_ts" });
  return { channelId: r.channel ?? channelId, ts: r.ts };
}

/** A mention in Slack's message syntax; ids are stripped to what Slack ids can hold, so no text can break out. */
const slackMention = (m: ChatMention) => {
  const id = m.id.replace(/[^A-Za-z0-9]/g, "");
  return m.kind === "channel" ? "<!here>" : m.kind === "group" ? `<!subteam^${id}>` : `<@${id}>`;
};

export class SlackChatClient implements ChatClient {
  // The Web API client resolves a call on HTTP 200 only; any other status throws.
  readonly successStatus = 200;
  private readonly web: WebClient;

  constructor(ctx: { baseUrl: string; accessToken: string; env?: Record<string, string | undefined> }) {
    this.web = webClient(ctx.baseUrl, ctx.accessToken, ctx.env);
  }

  async listChannels(p: { cursor?: string; limit: number }) {
    const r = await slackCall("conversations.list", () =>
      this.web.conversations.list({
        types: "public_channel,private_channel",
        exclude_archived: true,
        limit: Math.max(1, Math.min(p.limit, MAX_PAGE)),
        cursor: p.cursor || undefined,
      }));
    return {
      channels: (r.channels ?? []).filter((c) => c.id).map(channelOf),
      nextCursor: r.response_metadata?.next_cursor || null, // "" on the last page
    };
  }

  async channelInfo(channelId: string) {
    const r = await slackCall("conversations.info", () => this.web.conversations.info({ channel: channelId }));
    return channelOf(r.channel ?? { id: channelId });
  }

  async join(channelId: string) {
    await slackCall("conversations.join", () => this.web.conversations.join({ channel: channelId }));
  }

  async postCard(channelId: string, card: OperatorCard): Promise<ChatMessageRef> {
    const { text, blocks } = renderCard(card);
    const r = await slackCall("chat.postMessage", () =>
      this.web.chat.postMessage({ channel: channelId, text, blocks, unfurl_links: false, unfurl_media: false }))
      .catch((err: ProviderError) => {
        // A channel archived, or one the bot was removed from, can no more take a post than a deleted one.
        throw CHANNEL_CLOSED.has(String(err.detail.providerCode)) ? new ProviderError(err.provider, "not_found", err.message, err.detail) : err;
      });
    return refOf(r, channelId, "chat.postMessage");
  }

  async updateCard(ref: ChatMessageRef, card: OperatorCard) {
    const { text, blocks } = renderCard(card);
    await slackCall("chat.update", () => this.web.chat.update({ channel: ref.channelId, ts: ref.ts, text, blocks }));
  }

  /**
   * `text` is Slack mrkdwn written by the service (it may carry the configured mention), not trend text; `mentions`
   * go first, in Slack's syntax (`<@U…>`, `<!subteam^S…>`, `<!here>` for the channel).
   */
  async postReply(ref: ChatMessageRef, text: string, mentions: ChatMention[] = []): Promise<ChatMessageRef> {
    const lead = mentions.map(slackMention).join(" ");
    const body = lead ? `${lead} ${text}` : text;
    const r = await slackCall("chat.postMessage (reply)", () =>
      this.web.chat.postMessage({ channel: ref.channelId, thread_ts: ref.ts, text: cut(body, SLACK_LIMITS.messageText), unfurl_links: false, unfurl_media: false }));
    return refOf(r, ref.channelId, "chat.postMessage (reply)");
  }
}
