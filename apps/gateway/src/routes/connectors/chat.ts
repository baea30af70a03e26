import { z } from "zod";
import { approveFromCard } from "@trendgate/ads";
import { ProviderError } from "@trendgate/connector-core";
import type { ChatConnector } from "@trendgate/connector-chat";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { BACKTEST_DAYS, ChatBacktest, ChatChannelList, ChatChannelSelection, ChatChannelsQuery, ChatInteractionReply, ChatProviderList, ChatSavedChannel, SNOOZE_MINUTES, type OperatorItemState } from "@trendgate/contracts";
import { findAccountTrend, findOperatorItem, recordFeedback, saveConnectionSelection, saveConnectionSettings, type ConnectionRow } from "@trendgate/db";
import { applyActionIn, chatActor, chatClientOf, operatorSettings, queueCardRefresh } from "@trendgate/operator";
import { backtestChat } from "../../services/backtest/index.ts";
import { ApiError, notFound } from "../../http/api-error.ts";
import { openCursor, sealCursor } from "../../http/paginate.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import type { GatewayDeps } from "../../deps.ts";
import { basePathOf } from "./paths.ts";
import { providerStates } from "./provider-list.ts";
import { connectionOrConflict, providerProblem as sharedProviderProblem } from "./provider-problem.ts";

// The team-chat connector's own routes, besides the connection routes every OAuth provider gets
// (auth, connection status, disconnect): list channels, save the alerts channel, settings, and the public endpoint
// the chat provider calls when a card's button is pressed. Request bodies are the chat provider's manifest schemas.
// The interactivity endpoint never calls the provider: it answers at once (Slack allows 3 s) and the card update
// goes through the outbox.

const TAG = "Chat connector";

// Read from the registry, so a client (the console's Connections and Routing pages) names no chat provider itself.
const providersRoute = defineRoute({
  method: "get", path: "/api/integrations/chat/providers", operationId: "listChatProviders", tag: TAG, auth: "apiKey",
  summary: "The chat providers: display name, whether connected, whether this server can connect it (`configured`), where their routes are",
  description: "Each provider's `id` is what a routing rule's `provider` names; its routes (auth, connection, channels, save-channel, settings) are under `base_path`.",
  responses: { 200: { description: "The providers, in the registry's order", schema: ChatProviderList } },
  async handler({ deps, auth }) {
    const chat = await providerStates(deps, auth.accountId, deps.registry.ofKind("chat"));
    return { status: 200, body: { data: chat.map(({ connector, ...p }) => ({ ...p, channel_id_hint: connector.channelIdHint })) } };
  },
});

/**
 * The chat providers list, and the chat routes of each chat provider in the registry (the primary one at the spec's
 * paths). The list sits under the kind's path, so a registry without a chat provider serves neither.
 */
export function chatRoutes(registry: ConnectorRegistry): RouteDef[] {
  const chat = registry.ofKind("chat");
  return chat.length ? [providersRoute, ...chat.flatMap(routesOf)] : [];
}

function routesOf(connector: ChatConnector): RouteDef[] {
  const BASE = basePathOf(connector.manifest);
  const NAME = connector.manifest.displayName;
  // The primary provider keeps the spec's operation ids; another one names itself in them (listChatChannelsTeams).
  const op = (id: string) => (connector.manifest.primary ? id : `${id}${connector.manifest.operationName}`);
  const SelectionBody = connector.manifest.schemas.selection ?? z.object({ channel_id: z.string() }).strict();
  const SettingsBody = connector.manifest.schemas.settings ?? z.object({}).strict();
  const authorizeAgain = `authorize via GET ${BASE}/auth`;

  /** The account's chat connection (409 `not_connected` without one), in whatever state: settings need no provider call. */
  async function connectionRowOf(deps: GatewayDeps, accountId: string): Promise<{ connector: ChatConnector; conn: ConnectionRow }> {
    const conn = await connectionOrConflict(deps, accountId, connector.manifest.id, { name: connector.manifest.displayName, reconnect: authorizeAgain, usable: false });
    return { connector, conn };
  }

  /** The account's chat connection, usable at the provider (409 `not_connected` when missing or waiting for re-authorization). */
  async function connectionOf(deps: GatewayDeps, accountId: string): Promise<{ connector: ChatConnector; conn: ConnectionRow }> {
    const conn = await connectionOrConflict(deps, accountId, connector.manifest.id, { name: connector.manifest.displayName, reconnect: authorizeAgain, usable: true });
    return { connector, conn };
  }

  /** A provider failure as the caller's problem (./provider-problem.ts). */
  const providerProblem = (deps: GatewayDeps, conn: ConnectionRow, err: unknown) => sharedProviderProblem(deps, conn, err, { name: NAME, reconnect: authorizeAgain });

  async function clientOf(deps: GatewayDeps, accountId: string) {
    const { connector, conn } = await connectionOf(deps, accountId);
    const client = await chatClientOf(deps.connections, deps.config.PROVIDER_ENV, connector, conn).catch((err) => providerProblem(deps, conn, err));
    return { connector, conn, client, call: <T>(p: Promise<T>) => p.catch((err) => providerProblem(deps, conn, err)) };
  }

  /** Settings as stored, with the provider schema's defaults for whatever was never set. */
  const settingsOf = (conn: ConnectionRow) => {
    const parsed = SettingsBody.safeParse(conn.settings ?? {});
    return parsed.success ? parsed.data : SettingsBody.parse({});
  };

  return [
    defineRoute({
      method: "get", path: `${BASE}/channels`, operationId: op("listChatChannels"), tag: TAG, auth: "apiKey",
      summary: `Channels the ${NAME} app can see`,
      description: `Public and private channels (archived ones left out), one page at a time in ${NAME}'s cursor order, each with whether the app's bot is a member. 409 \`not_connected\` until the account has authorized ${NAME} (GET ${BASE}/auth).`,
      query: ChatChannelsQuery,
      responses: {
        200: { description: "A page of channels", schema: ChatChannelList },
        409: { description: "`not_connected`: authorize first (or again)" },
      },
      async handler({ deps, auth, query }) {
        const listing = `chat-channels:${auth.accountId}`;
        const cursor = query.cursor ? openCursor<string>(deps.config.ENCRYPTION_KEY, listing, query.cursor) : undefined;
        const { client, call } = await clientOf(deps, auth.accountId);
        const page = await call(client.listChannels({ limit: query.limit, cursor }));
        return {
          status: 200,
          body: { data: page.channels.map((c) => ({ id: c.id, name: c.name, is_private: c.isPrivate, is_member: c.isMember })), next_cursor: page.nextCursor ? sealCursor(deps.config.ENCRYPTION_KEY, listing, page.nextCursor) : null },
        };
      },
    }),
    defineRoute({
      method: "post", path: `${BASE}/save-channel`, operationId: op("saveChatChannel"), tag: TAG, auth: "apiKey",
      summary: "Choose the channel operator items are posted to",
      description:
        `Checked at ${NAME}: a public channel the bot is not in is joined. A private channel needs the bot invited first ` +
        "(`/invite @<app>` in the channel): one the provider hides from the bot answers 422 naming `channel_id` (as an unknown " +
        "channel does, saying to invite the bot), one it shows answers 422 `bot_not_in_channel`. Archived channels are refused.",
      body: SelectionBody,
      responses: {
        200: { description: "The saved channel", schema: ChatSavedChannel },
        409: { description: "`not_connected`: authorize first (or again)" },
      },
      async handler({ deps, auth, body }) {
        const channelId = (body as { channel_id: string }).channel_id;
        const { client, conn, call } = await clientOf(deps, auth.accountId);
        const notFound = (message: string) => new ApiError("validation_failed", `channel_id: ${message}`, {
          errors: [{ location: "body", path: "channel_id", message, code: "not_found" }],
        });
        const channel = await client.channelInfo(channelId).catch((err) => {
          // A private channel the bot is not in is invisible to it, exactly like one that does not exist.
          if (err instanceof ProviderError && err.kind === "not_found")
            throw notFound(`no channel ${channelId} is visible to the ${NAME} app; if it is a private channel, invite the bot there first (\`/invite @<your app's name>\`)`);
          return providerProblem(deps, conn, err);
        });
        if (channel.isArchived) throw notFound(`channel ${channelId} is archived`);
        let joined = false;
        if (!channel.isMember) {
          if (channel.isPrivate) {
            throw new ApiError("bot_not_in_channel", `#${channel.name} is private and the app's bot is not in it: invite it there (\`/invite @<your app's name>\`), then save the channel again`, {
              errors: [{ location: "body", path: "channel_id", message: "the bot is not a member of this private channel", code: "bot_not_in_channel" }],
            });
          }
          // A provider where the app cannot join by itself (Teams: it must be installed in the team) refuses with why.
          await client.join(channel.id).catch((err) => {
            if (err instanceof ProviderError && err.kind === "bad_request") {
              throw new ApiError("bot_not_in_channel", err.message, { errors: [{ location: "body", path: "channel_id", message: err.message, code: "bot_not_in_channel" }] });
            }
            return providerProblem(deps, conn, err);
          });
          joined = true;
        }
        const selection = { channel_id: channel.id, channel_name: channel.name, is_private: channel.isPrivate };
        await saveConnectionSelection(deps.db, conn.id, selection);
        return { status: 200, body: { ...selection, joined } };
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/channel`, operationId: op("getChatChannel"), tag: TAG, auth: "apiKey",
      summary: "The saved alerts channel",
      description: `The channel POST ${BASE}/save-channel saved. 404 \`not_found\` when none is saved.`,
      responses: {
        200: { description: "The saved channel", schema: ChatChannelSelection },
        404: { description: "No channel saved" },
        409: { description: "`not_connected`: authorize first" },
      },
      async handler({ deps, auth }) {
        const { conn } = await connectionRowOf(deps, auth.accountId);
        const saved = ChatChannelSelection.safeParse(conn.selection ?? undefined);
        if (!saved.success) throw notFound(`${NAME} channel`);
        return { status: 200, body: saved.data };
      },
    }),
    defineRoute({
      method: "put", path: `${BASE}/settings`, operationId: op("putChatSettings"), tag: TAG, auth: "apiKey",
      summary: "Which trend events become operator items, and how they alert",
      description: "Fields left out take their defaults (listed in the schema); the answer is the stored settings with defaults applied.",
      body: SettingsBody,
      responses: {
        200: { description: "The stored settings", schema: SettingsBody },
        409: { description: "`not_connected`: authorize first" },
      },
      async handler({ deps, auth, body }) {
        const { conn } = await connectionRowOf(deps, auth.accountId);
        await saveConnectionSettings(deps.db, conn.id, body);
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: "post", path: `${BASE}/settings/preview`, operationId: op("previewChatSettings"), tag: TAG, auth: "apiKey",
      summary: "Backtest chat settings before saving: the operator items they would have opened over the last days",
      description: "Replays the account's stored trend events (up to 14 days back, `days`) through the account's stored routing rules and the " +
        "settings' min_severity (or sensitivity) and categories, as intake routes them (the first matching rule, else the default route): one item per " +
        "trend, opened by its first event that qualifies, with the rule it would open under (`route_id`; rules matching on signal sources match " +
        "only the item's own source here). Nothing is saved or posted; no connection is needed. " +
        "Bounded as the webhook preview is (`truncated`, and at most BACKTEST_CONCURRENCY_PER_ACCOUNT backtests of the account at once).",
      query: z.object({ days: BACKTEST_DAYS }),
      body: SettingsBody,
      responses: {
        200: { description: "What the settings would have opened (`truncated`: up to `to` only)", schema: ChatBacktest },
        429: { description: "`too_many_backtests`: the account already runs BACKTEST_CONCURRENCY_PER_ACCOUNT backtests; retry after Retry-After seconds" },
      },
      async handler({ deps, auth, body, query }) {
        const settings = operatorSettings(deps.registry, body, deps.config.OPERATOR_RENOTIFY_SECONDS, connector.manifest.id);
        return { status: 200, body: await backtestChat(deps, auth.accountId, settings, query.days) };
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/settings`, operationId: op("getChatSettings"), tag: TAG, auth: "apiKey",
      summary: "The chat settings, with defaults applied",
      responses: {
        200: { description: "The settings", schema: SettingsBody },
        409: { description: "`not_connected`: authorize first" },
      },
      async handler({ deps, auth }) {
        const { conn } = await connectionRowOf(deps, auth.accountId);
        return { status: 200, body: settingsOf(conn) };
      },
    }),
    defineRoute({
      method: "post", path: `${BASE}/interactivity`, operationId: op("chatInteractivity"), tag: TAG, auth: "public", rawBody: true,
      summary: `Button presses on operator cards (${NAME} calls this)`,
      description:
        `Set this URL as the ${NAME} app's interactivity request URL (Slack) or messaging endpoint (Teams). The body is ${NAME}'s own, ` +
        `verified as ${NAME} signs it (with ${connector.interactions.signingSecretEnv}): a forged or stale request answers 401 and changes nothing. ` +
        "A valid press applies the same action as the REST route; when the card was stale (the item changed meanwhile) nothing changes, " +
        "the answer is a short ephemeral text and the card is refreshed.",
      responses: {
        200: { description: "Acknowledged (empty), or an ephemeral text when nothing could be done", schema: ChatInteractionReply },
        401: { description: "Missing, forged or stale signature" },
        403: { description: "`forbidden`: authentic, but signed by a key that may not speak for this request (Teams: not endorsed for the activity's channel)" },
        501: { description: `\`provider_not_configured\`: ${connector.interactions.signingSecretEnv} is not set` },
      },
      async handler({ deps, req, atomically }) {
        const env = connector.interactions.signingSecretEnv;
        const secret = deps.config.PROVIDER_ENV[env];
        if (!secret) throw new ApiError("provider_not_configured", `Set ${env} (the ${connector.manifest.displayName} app's signing secret) to accept interactions`);
        const raw = Buffer.isBuffer(req.rawBody) ? req.rawBody : Buffer.alloc(0);
        const verified = await connector.interactions.verify(req.headers, raw, secret, undefined, deps.config.PROVIDER_ENV);
        if (!verified.ok) throw new ApiError(verified.forbidden ? "forbidden" : "unauthorized", `Interaction refused: ${verified.reason}`);

        const ephemeral = (text: string) => ({ status: 200, body: connector.interactions.privateReply(text) });
        const it = connector.interactions.parse(raw);
        if (!it) return { status: 200, body: connector.interactions.appliedReply?.() }; // not one of our buttons: acknowledged, nothing to do
        const item = await findOperatorItem(deps.db, it.itemId);
        const conn = item ? await deps.connections.find(item.accountId, connector.manifest.id) : null;
        // The card's workspace must be the connection's: a press from another workspace names nothing here.
        if (!item || !conn || !connector.interactions.fromWorkspaceOf(it, conn.externalAccount as Record<string, unknown>)) return ephemeral("This item is not available in this workspace.");

        if (it.approve) {
          const approve = it.approve;
          return atomically(async (tx) => {
            const r = await approveFromCard(tx, deps, item, { ...it, approve }, chatActor(it.teamId, it.user.id));
            return r.text ? { ...ephemeral(r.text), outbox: r.outbox } : { status: 200, body: connector.interactions.appliedReply?.(), outbox: r.outbox };
          });
        }
        if (it.feedback) {
          const trend = item.trendId ? await findAccountTrend(deps.db, item.accountId, item.trendId) : null;
          if (!trend) return ephemeral("This item's trend no longer exists.");
          const r = await recordFeedback(deps.db, trend, { verdict: it.feedback, actor: chatActor(it.teamId, it.user.id) });
          return ephemeral(`Thanks: "${trend.name}" marked ${it.feedback === "useful" ? "useful" : "not a trend"}. ` +
            (r.evidenceBar > 1 ? `It now needs ${r.evidenceBar}x the usual evidence to alert.` : "It alerts at the usual evidence."));
        }
        const action = it.action!;
        return atomically(async (tx) => { // no Idempotency-Key here: one plain transaction
          const snooze = it.snoozeMinutes === undefined ? undefined : Math.min(SNOOZE_MINUTES.max, Math.max(SNOOZE_MINUTES.min, it.snoozeMinutes));
          const r = await applyActionIn(tx, deps, {
            itemId: item.id, accountId: item.accountId, action, version: it.version, snoozeMinutes: snooze,
            actor: chatActor(it.teamId, it.user.id), actorName: it.user.name,
          });
          if (r.ok) return { status: 200, body: connector.interactions.appliedReply?.(), outbox: r.outbox };
          if (r.reason === "not_found") return ephemeral("This item no longer exists.");
          const outbox = await queueCardRefresh(tx, r.item, conn.id);
          const state = r.item.state as OperatorItemState;
          return {
            ...ephemeral(r.reason === "version_conflict"
              ? `This item changed meanwhile: it is now ${state}. The card is being refreshed; press again if still needed.`
              : `An item that is ${state} cannot be ${PAST[action]}. The card is being refreshed.`),
            outbox,
          };
        });
      },
    }),
  ];
}

const PAST: Record<string, string> = { acknowledge: "acknowledged", resolve: "resolved", snooze: "snoozed", reopen: "reopened", mute: "muted" };
