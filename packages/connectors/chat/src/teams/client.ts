import { ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import type { ChatChannel, ChatClient, ChatMention, ChatMessageRef, OperatorCard } from "../kind.ts";
import { botSettingsOf, connector, type BotSettings } from "./bot.ts";
import { cut, renderCard, summaryOf, TEAMS_LIMITS } from "./cards.ts";
import { PROVIDER, teamsError } from "./errors.ts";
import { env as ENV } from "./manifest.ts";
import { http } from "./http.ts";
import { parseTeamsMention } from "./schemas.ts";

// The chat client of one tenant connection. Channels come from Graph with the tenant's delegated token; cards go
// through the Bot Framework Connector with the bot's own token (bot.ts). One call per method and no retries: the
// outbox decides when to try again (a 429 comes back as rate_limited with Microsoft's Retry-After).
//
// Our channel id is `<team id>/<Graph channel id>`: Graph can only address a channel under its team, and the team is
// where the app is installed (isMember), so channelInfo needs both; the Connector takes the channel id alone
// (channelData.channel.id). A posted card's ChatMessageRef is { channelId: the Connector's conversation id (the
// thread: `19:…@thread.tacv2;messageid=<id>`), ts: the activity id }, which is what an update or a reply names.

const TEAM_CHANNEL = /^([0-9a-fA-F-]{36})\/(19:[^/]+)$/;

type GraphPage<T> = { value?: T[]; "@odata.nextLink"?: string };
type Team = { id?: string; displayName?: string; isArchived?: boolean };
type Channel = { id?: string; displayName?: string; membershipType?: string; isArchived?: boolean };

/** Where a listing stands: the joinedTeams page (null: the first), the team in it, its channels page, how many of that page were handed out. */
interface Cursor { tl: string | null; ti: number; cl: string | null; cs: number }
const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");
function decode(s: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
    if (Number.isSafeInteger(c.ti) && Number.isSafeInteger(c.cs) && (c.tl === null || typeof c.tl === "string") && (c.cl === null || typeof c.cl === "string")) return c;
  } catch { /* falls through */ }
  throw new ProviderError(PROVIDER, "bad_request", "list channels: the cursor is not one this connector made", { status: null, providerCode: "invalid_cursor" });
}

/** Splits our channel id; a malformed one names nothing, as an unknown channel does. */
function splitId(channelId: string): { teamId: string; channelId: string } {
  const m = TEAM_CHANNEL.exec(channelId);
  if (!m) throw new ProviderError(PROVIDER, "not_found", `channel ${channelId}: not a <team id>/<channel id>`, { status: null, providerCode: "invalid_channel_id" });
  return { teamId: m[1], channelId: m[2] };
}

/** The Connector's conversation id of a thread, without its `;messageid=`: the channel a reply mentions. */
const channelOfConversation = (conversationId: string) => conversationId.split(";")[0];

/** `&`, `<`, `>` as entities: a service-written text can then never forge an `<at>` mention or other markup. */
const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** `<at>name</at>` for each mention, and the entities that make Teams notify them. */
function mentionsOf(mentions: ChatMention[], channelId: string): { text: string; entities: object[] } {
  const entities: object[] = [];
  const texts: string[] = [];
  for (const m of mentions) {
    const name = escapeText(m.name || (m.kind === "channel" ? "channel" : m.kind === "group" ? "tag" : "user"));
    const text = `<at>${name}</at>`;
    const mentioned = m.kind === "channel" ? { id: channelId, name, type: "channel" } : m.kind === "group" ? { id: m.id, name, type: "tag" } : { id: m.id, name };
    texts.push(text);
    entities.push({ type: "mention", text, mentioned });
  }
  return { text: texts.join(" "), entities };
}

export class TeamsChatClient implements ChatClient {
  // The interface has one number per client: a card's post (the Connector's create conversation) answers 201 Created,
  // which is what a delivered card's attempt records; updates answer 200, replies 201.
  readonly successStatus = 201;
  private readonly graph: URL;
  private readonly tenantId: string | undefined;
  private readonly env: ProviderEnv | undefined;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; account?: Record<string, unknown>; env?: ProviderEnv }) {
    this.graph = new URL(ctx.baseUrl.endsWith("/") ? ctx.baseUrl : `${ctx.baseUrl}/`);
    this.tenantId = typeof ctx.account?.tenant_id === "string" ? ctx.account.tenant_id : undefined;
    this.env = ctx.env;
  }

  private get bot(): BotSettings { return botSettingsOf(this.env); }

  /**
   * One Graph GET: a path below the base URL, or an @odata.nextLink Graph gave us, followed only on Graph's own
   * origin (the tenant's token must never go anywhere else, whatever a link or a cursor says).
   */
  private async get<T>(what: string, pathOrLink: string): Promise<T> {
    const url = new URL(pathOrLink, this.graph);
    if (url.origin !== this.graph.origin) throw new ProviderError(PROVIDER, "bad_request", `${what}: a next link outside Graph (${url.origin})`, { status: null, providerCode: "foreign_next_link" });
    const res = await http.fetch(what, url, { env: this.env, method: "GET", headers: { authorization: `Bearer ${this.ctx.accessToken}` } });
    if (res.status !== 200) throw teamsError(res, what, "graph");
    return res.body as T;
  }

  /** Whether our app (its bot) is installed in a team: only then can the bot post in the team's channels. */
  private async installed(teamId: string): Promise<boolean> {
    const appId = this.env?.[ENV.appId];
    if (!appId) throw new ProviderError(PROVIDER, "bad_request", `cannot tell whether the app is in a team: set ${ENV.appId}`, { status: null, providerCode: "bot_not_configured" });
    let link: string | undefined = `teams/${encodeURIComponent(teamId)}/installedApps?$expand=teamsAppDefinition($expand=bot)`;
    while (link) {
      const page: GraphPage<{ teamsAppDefinition?: { bot?: { id?: string } | null } }> = await this.get("list installed apps", link);
      if ((page.value ?? []).some((a) => a.teamsAppDefinition?.bot?.id?.toLowerCase() === appId.toLowerCase())) return true;
      link = page["@odata.nextLink"];
    }
    return false;
  }

  /**
   * A private or shared channel has its own membership, which a team-wide app installation does not grant: such a
   * channel is listed as private and not a member (the save route then asks for the app to be added there).
   */
  private channelOf(team: Team, c: Channel, installed: boolean): ChatChannel {
    const standard = (c.membershipType ?? "standard") === "standard";
    return {
      id: `${team.id}/${c.id}`,
      name: `${team.displayName ?? team.id} / ${c.displayName ?? c.id}`,
      isPrivate: !standard,
      isMember: installed && standard,
      isArchived: c.isArchived === true || team.isArchived === true,
    };
  }

  /** Channels of every team the signed-in user is in, team by team; archived ones left out. */
  async listChannels(p: { cursor?: string; limit: number }) {
    const limit = Math.max(1, Math.min(p.limit, 1000));
    const at: Cursor = p.cursor ? decode(p.cursor) : { tl: null, ti: 0, cl: null, cs: 0 };
    const out: ChatChannel[] = [];
    const installedByTeam = new Map<string, boolean>();
    let teams: GraphPage<Team> | null = null;
    for (;;) {
      teams ??= await this.get<GraphPage<Team>>("list joined teams", at.tl ?? "me/joinedTeams?$select=id,displayName,isArchived");
      const list = teams.value ?? [];
      if (at.ti >= list.length) {
        const next = teams["@odata.nextLink"];
        if (!next) return { channels: out, nextCursor: null };
        Object.assign(at, { tl: next, ti: 0, cl: null, cs: 0 });
        teams = null;
        continue;
      }
      const team = list[at.ti];
      if (!team.id) { Object.assign(at, { ti: at.ti + 1, cl: null, cs: 0 }); continue; }
      const page = await this.get<GraphPage<Channel>>("list channels", at.cl ?? `teams/${encodeURIComponent(team.id)}/channels`);
      if (!installedByTeam.has(team.id)) installedByTeam.set(team.id, await this.installed(team.id));
      const rest = (page.value ?? []).slice(at.cs);
      const room = limit - out.length;
      const taken = rest.slice(0, room);
      for (const c of taken) {
        const ch = c.id ? this.channelOf(team, c, installedByTeam.get(team.id)!) : null;
        if (ch && !ch.isArchived) out.push(ch);
      }
      if (rest.length > room) return { channels: out, nextCursor: encode({ ...at, cs: at.cs + room }) };
      const nextChannels = page["@odata.nextLink"];
      Object.assign(at, nextChannels ? { cl: nextChannels, cs: 0 } : { ti: at.ti + 1, cl: null, cs: 0 });
      if (out.length >= limit) return { channels: out, nextCursor: encode(at) };
    }
  }

  async channelInfo(channelId: string) {
    const id = splitId(channelId);
    const team = await this.get<Team>("get team", `teams/${encodeURIComponent(id.teamId)}?$select=id,displayName,isArchived`);
    const channel = await this.get<Channel>("get channel", `teams/${encodeURIComponent(id.teamId)}/channels/${encodeURIComponent(id.channelId)}`);
    return this.channelOf({ ...team, id: id.teamId }, { ...channel, id: id.channelId }, await this.installed(id.teamId));
  }

  /** A bot cannot add itself to a team: someone installs the app there (Teams: Apps, or the team's ⋯ > Manage team > Apps). */
  async join(channelId: string): Promise<void> {
    const { teamId } = splitId(channelId);
    throw new ProviderError(PROVIDER, "bad_request",
      `the Trendgate app is not installed in team ${teamId}: install the app in the team (in Teams: Apps, find the app, Add to a team), then save the channel again`,
      { status: null, providerCode: "app_not_installed" });
  }

  async postCard(channelId: string, card: OperatorCard): Promise<ChatMessageRef> {
    const id = splitId(channelId);
    const bot = this.bot;
    // Same rule as Slack's card: only an open critical item notifies, and only a well-formed configured mention.
    const mention = card.severity === "critical" && card.state === "open" ? parseTeamsMention(card.mention) : null;
    const m = mentionsOf(mention ? [mention] : [], id.channelId);
    const res = await connector(bot, "create conversation", "POST", "v3/conversations", {
      isGroup: true,
      channelData: { channel: { id: id.channelId }, ...(this.tenantId ? { tenant: { id: this.tenantId } } : {}) },
      ...(this.tenantId ? { tenantId: this.tenantId } : {}),
      activity: { ...this.cardActivity(card), ...(m.text ? { text: m.text, entities: m.entities } : {}) },
    }, "install the Trendgate app in the team");
    const conversationId = res.body?.id;
    const activityId = res.body?.activityId;
    if (typeof conversationId !== "string" || typeof activityId !== "string" || !conversationId || !activityId) {
      throw new ProviderError(PROVIDER, "unavailable", "create conversation: the answer names no conversation or activity", { status: res.status, providerCode: "no_activity_id", mayHaveActed: true });
    }
    return { channelId: conversationId, ts: activityId };
  }

  async updateCard(ref: ChatMessageRef, card: OperatorCard): Promise<void> {
    await connector(this.bot, "update activity", "PUT", `v3/conversations/${encodeURIComponent(ref.channelId)}/activities/${encodeURIComponent(ref.ts)}`,
      { ...this.cardActivity(card), id: ref.ts }, "install the Trendgate app in the team");
  }

  /** `text` is written by the service, not trend text; it is escaped all the same, and the mentions are added before it. */
  async postReply(ref: ChatMessageRef, text: string, mentions: ChatMention[] = []): Promise<ChatMessageRef> {
    const m = mentionsOf(mentions, channelOfConversation(ref.channelId));
    const body = cut(`${m.text ? `${m.text} ` : ""}${escapeText(text)}`, TEAMS_LIMITS.messageText);
    const res = await connector(this.bot, "reply to activity", "POST", `v3/conversations/${encodeURIComponent(ref.channelId)}/activities/${encodeURIComponent(ref.ts)}`,
      { type: "message", textFormat: "markdown", text: body, replyToId: ref.ts, ...(m.entities.length ? { entities: m.entities } : {}) }, "install the Trendgate app in the team");
    const id = res.body?.id;
    if (typeof id !== "string" || !id) throw new ProviderError(PROVIDER, "unavailable", "reply to activity: the answer names no activity", { status: res.status, providerCode: "no_activity_id", mayHaveActed: true });
    return { channelId: ref.channelId, ts: id };
  }

  private cardActivity(card: OperatorCard) {
    return { type: "message", summary: summaryOf(card), attachments: [{ contentType: "application/vnd.microsoft.card.adaptive", content: renderCard(card) }] };
  }
}

