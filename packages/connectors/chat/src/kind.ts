import type { ProviderManifest } from "@trendgate/connector-core";

// The team-chat connector kind: list channels, pick one, post operator cards and keep them up to date, and turn a
// button press back into an operator action. A chat provider (packages/connectors/chat/src/<provider>/) implements
// ChatConnector; every failure is a ProviderError (@trendgate/connector-core) with the provider's code in
// `detail.providerCode` (e.g. `not_in_channel`).

export interface ChatChannel {
  id: string;
  name: string;
  isPrivate: boolean;
  /** The app's bot user is in the channel (it can post there). */
  isMember: boolean;
  isArchived: boolean;
}

export type OperatorState = "open" | "acknowledged" | "snoozed" | "resolved";
export type OperatorAction = "acknowledge" | "resolve" | "snooze" | "reopen" | "mute";

/** What an operator card shows; the provider renders it (Slack: Block Kit). */
export interface OperatorCard {
  itemId: string;
  version: number;
  state: OperatorState;
  severity: "low" | "medium" | "high" | "critical";
  title: string;
  category: string;
  summary: string;
  velocity: number;
  briefingUrl: string | null;
  occurrences: number;
  acknowledgedBy: string | null;
  resolvedBy: string | null;
  snoozedUntil: Date | null;
  /** Mention added to critical alerts (e.g. Slack `<!here>`), or null. */
  mention: string | null;
  /** The item is about a trend: the card offers feedback on it ("Not a trend", "Useful"). */
  judgeable: boolean;
  /**
   * The item asks to approve an ads plan: the card lists its changes and offers "Approve and apply", bound to the
   * plan's hash (a press for another hash changes nothing). Absent on other items; `decided` once applied or refused.
   */
  approval?: { planId: string; planHash: string; provider: string; lines: string[]; decided: string | null };
}

/** Someone a reply notifies: a user, a user group, or everyone in the channel. The provider renders it. */
export interface ChatMention {
  kind: "user" | "group" | "channel";
  /** The provider's id of the user or group (Slack U…/S…, Teams AAD object id); ignored for `channel`. */
  id: string;
  /** Display name (Teams shows it in the mention). */
  name?: string;
}

/** Where a posted card lives, to update it later. */
export interface ChatMessageRef {
  channelId: string;
  ts: string;
}

/** Feedback on the card's trend (see @trendgate/contracts FEEDBACK_VERDICTS). */
export type ChatFeedbackVerdict = "not_a_trend" | "useful";

/**
 * A verified button press: an operator action on the card's item, a verdict on its trend (`feedback` set, which
 * leaves the item as it is), or the approval of the ads plan the item asks about (`approve` set).
 */
export interface ChatInteraction {
  itemId: string;
  action?: OperatorAction;
  feedback?: ChatFeedbackVerdict;
  /** For snooze. */
  snoozeMinutes?: number;
  /** For approve: the plan and the hash the card showed. */
  approve?: { planId: string; planHash: string };
  /** The item version the card showed when pressed. */
  version?: number;
  user: { id: string; name?: string };
  /** The workspace it came from (must match the connection's). */
  teamId: string;
}

export interface ChatClient {
  /** The HTTP status of the provider's answer to any call that resolves (a failure throws), for attempt records. */
  readonly successStatus: number;
  /** One page of the channels the app can see (public and private), in the provider's cursor style. */
  listChannels(p: { cursor?: string; limit: number }): Promise<{ channels: ChatChannel[]; nextCursor: string | null }>;
  channelInfo(channelId: string): Promise<ChatChannel>;
  /** Joins a public channel. */
  join(channelId: string): Promise<void>;
  /** Fails with kind `not_found` when the channel cannot take the app's posts any more (deleted, archived, the bot removed). */
  postCard(channelId: string, card: OperatorCard): Promise<ChatMessageRef>;
  updateCard(ref: ChatMessageRef, card: OperatorCard): Promise<void>;
  /** A reply under a card (re-notification, an escalation step), notifying `mentions` (rendered the provider's way). */
  postReply(ref: ChatMessageRef, text: string, mentions?: ChatMention[]): Promise<ChatMessageRef>;
}

export type ChatVerdict = { ok: true } | { ok: false; reason: string; forbidden?: boolean };

export interface ChatInteractions {
  /** Configuration variable holding the signing secret of interaction requests. */
  signingSecretEnv: string;
  /**
   * Checks the request's signature (Slack: HMAC with the signing secret; Teams: the Bot Framework JWT) and freshness.
   * `signingSecret` is the value of `signingSecretEnv`; `env` the provider settings (keys URLs, app ids). `forbidden`:
   * authentic, but its signer may not speak for this request (Teams: a key not endorsed for the channel), 403 not 401.
   */
  verify(headers: Record<string, string | string[] | undefined>, rawBody: Buffer, signingSecret: string, now?: Date, env?: Record<string, string | undefined>): Promise<ChatVerdict> | ChatVerdict;
  /** The button press in a verified body, or null when it is not one of ours (other interaction types). */
  parse(rawBody: Buffer): ChatInteraction | null;
  /** Whether a press comes from the workspace a connection is connected to (its stored `account` facts). */
  fromWorkspaceOf(interaction: ChatInteraction, account: Record<string, unknown>): boolean;
  /** The response body that shows `text` to the presser only. */
  privateReply(text: string): Record<string, unknown>;
  /** The response body of a press that was applied (Slack: none; Teams: an invoke response). */
  appliedReply?(): Record<string, unknown>;
}

export interface ChatConnector {
  manifest: ProviderManifest<"chat">;
  /** A client bound to one connection's access token (and stored account facts); `env`: the provider settings. */
  client(ctx: { baseUrl: string; accessToken: string; account?: Record<string, unknown>; env?: Record<string, string | undefined> }): ChatClient;
  interactions: ChatInteractions;
  /** The settings' `critical_mention` (in this provider's syntax) as a mention, or null. */
  parseMention(setting: string | null): ChatMention | null;
  /** How its channel ids look, for a person who types one (the console, when the channel list cannot be loaded). */
  channelIdHint: string;
}
