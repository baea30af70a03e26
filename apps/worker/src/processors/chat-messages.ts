import { ProviderError } from "@trendgate/connector-core";
import type { ChatClient, ChatMessageRef, OperatorCard } from "@trendgate/connector-chat";
import { QUEUES, type ChatMessagePayload } from "@trendgate/contracts";
import {
  appendOperatorItemEvents, findOperatorItem, hasNewerPendingChatUpdate, recordAccountEventsIn, storeChatMessage, trendAnomalousSince, type OperatorItemRow,
} from "@trendgate/db";
import { chatClientOf, chatSetupOf, hasCard, operatorCard, renotifyText, SYSTEM_ACTOR, targetOf, type ChatSetup, type ItemTarget } from "@trendgate/operator";
import { escalationSteps, type EscalationPlan } from "./escalation-steps.ts";
import { DeferError, Pacer } from "@trendgate/delivery";
import { outboxProcessor, type OutboxHandler } from "../outbox/index.ts";
import type { WorkerDeps } from "./types.ts";

// Operator cards in the team chat, on the shared outbox (QUEUES.chatMessages): post_item posts an item's card (or
// updates it when it already has one), update_item re-renders it, renotify_item replies under it with the mention,
// escalate_item takes one escalation step (packages/operator/src/escalation.ts) of the chain kept on the item when it
// opened, not its route's steps now. Each item's messages go through its route's chat provider and channel
// (packages/operator/src/routing.ts).
// Every message renders the item as it is now, so a late one never shows an old state. Posts are paced to one per
// CHAT_POST_INTERVAL_MS per channel across the fleet (@trendgate/delivery pacing/pacer.ts: a message that must wait is deferred to
// its own slot, not failed). The outbox retries per the error's kind; credentials refused mark the connection
// needs_reauth; a message that fails for good is shown on the item (chat.delivery_error) and in its history.

type Skipped = { skipped: string };
const skip = (why: string): Skipped => ({ skipped: why });

/** Cards rendered from the same state (dates as instants). */
const sameCard = (a: OperatorCard, b: OperatorCard) => JSON.stringify(a) === JSON.stringify(b);

export function chatMessageHandler(deps: WorkerDeps): OutboxHandler<ChatMessagePayload> {
  const { db, config, logger } = deps;
  const redis = deps.queues.connection;

  const pacer = new Pacer(redis, config.QUEUE_PREFIX, config.CHAT_POST_INTERVAL_MS);
  const escalation = escalationSteps(deps);
  /** One post per interval per channel, fleet-wide; a message that must wait is deferred until its own slot. */
  async function pace(message: { id: string }, connectionId: string, channelId: string) {
    const wait = await pacer.reserve(`chat:${connectionId}:${channelId}`, message.id);
    if (wait > 0) throw new DeferError(wait);
  }

  async function clientFor(target: ItemTarget): Promise<ChatClient> {
    const connector = deps.registry.find("chat", target.provider);
    if (!connector) throw new ProviderError(target.provider, "unavailable", `chat provider ${target.provider} is not in this build's registry`);
    return chatClientOf(deps.connections, config.PROVIDER_ENV, connector, target.connection);
  }

  /**
   * A posted card's reference is kept in Redis until it is stored on its item: when storing fails (Postgres down, the
   * process killed), the item's next post finds the card already in the channel and stores it instead of posting a
   * second one. Kept for a week at most.
   */
  const postedKey = (itemId: string) => `${config.QUEUE_PREFIX}:chat:posted:${itemId}`;
  const POSTED_TTL_SECONDS = 7 * 24 * 3600;

  async function post(item: OperatorItemRow, setup: ChatSetup, target: ItemTarget, client: ChatClient): Promise<Record<string, unknown>> {
    const channelId = target.channelId!;
    const card = await operatorCard(db, item, setup.settings);
    const kept = await redis.get(postedKey(item.id));
    const ref: ChatMessageRef = kept ? JSON.parse(kept) : await client.postCard(channelId, card);
    if (!kept) {
      await redis.set(postedKey(item.id), JSON.stringify(ref), "EX", POSTED_TTL_SECONDS)
        .catch((err) => logger.warn({ item_id: item.id, err: String(err) }, "posted card not kept; a failed store would post it again"));
    }
    const stored = await storeChatMessage(db, item.id, target.provider, ref.channelId, ref.ts);
    await redis.del(postedKey(item.id)).catch(() => undefined); // expires anyway
    if (!stored) return { channel: ref.channelId, ts: ref.ts, duplicate: true }; // another run posted first (at least once)
    // A change committed while this card was on its way queued no update (there was no card yet), and a kept card
    // shows the state of its first post: show the latest now.
    const latest = await operatorCard(db, stored, setup.settings);
    if (kept || !sameCard(latest, card)) await client.updateCard(ref, latest);
    return { channel: ref.channelId, ts: ref.ts, version: latest.version, ...(kept ? { stored_after_failure: true } : {}) };
  }

  /**
   * A routed item's first card: when its rule's channel cannot take it any more (deleted, archived, the bot removed
   * since the rule was saved), the default route's channel does, and the account hears why (operator.route_failed,
   * also in the item's history). Its later messages follow the card.
   */
  async function postRouted(item: OperatorItemRow, setup: ChatSetup, target: ItemTarget, client: ChatClient): Promise<{ result: Record<string, unknown>; client: ChatClient }> {
    try {
      return { result: await post(item, setup, target, client), client };
    } catch (err) {
      const closed = err instanceof ProviderError && err.kind === "not_found";
      if (!closed || target.routeId === null || !setup.channelId || (setup.channelId === target.channelId && setup.connection.id === target.connection.id)) throw err;
      const fallback: ItemTarget = { ...target, routeId: null, provider: setup.connection.provider, connection: setup.connection, channelId: setup.channelId };
      const fallbackClient = fallback.connection.id === target.connection.id ? client : await clientFor(fallback);
      const result = await post(item, setup, fallback, fallbackClient);
      const route = setup.routes.find((r) => r.id === target.routeId);
      const data = {
        item_id: item.id, trend_id: item.trendId, title: item.title, route_id: target.routeId, route: route?.name ?? null,
        provider: target.provider, channel_id: target.channelId, error: err.message, posted_to: { provider: fallback.provider, channel_id: setup.channelId },
      };
      // After the post: a failure here must not post the card twice; the card itself says where it went.
      await db.$transaction(async (tx) => {
        await appendOperatorItemEvents(tx, [{
          itemId: item.id, accountId: item.accountId, action: "route_failed", fromState: item.state, toState: item.state, actor: SYSTEM_ACTOR,
          version: item.version, data: { route_id: target.routeId, channel_id: target.channelId, error: err.message, posted_to: data.posted_to },
        }]);
        await recordAccountEventsIn(tx, [{ accountId: item.accountId, type: "operator.route_failed", data }]);
      }).catch((e) => logger.warn({ item_id: item.id, err: String(e) }, "route failure not recorded (the card went to the default channel)"));
      return { result: { ...result, fell_back_from: { route_id: target.routeId, channel_id: target.channelId, error: err.message } }, client: fallbackClient };
    }
  }

  async function update(item: OperatorItemRow, setup: ChatSetup, client: ChatClient): Promise<Record<string, unknown>> {
    const ref: ChatMessageRef = { channelId: item.chatChannelId!, ts: item.chatMessageTs! };
    const card = await operatorCard(db, item, setup.settings);
    await client.updateCard(ref, card);
    return { channel: ref.channelId, ts: ref.ts, version: card.version };
  }

  return {
    async send(message, ctx) {
      const payload = message.payload;
      const item = await findOperatorItem(db, payload.item_id);
      if (!item) return skip("item deleted");
      const setup = await chatSetupOf(db, deps.registry, item.accountId, config.OPERATOR_RENOTIFY_SECONDS);
      if (!setup) return skip("chat not connected");
      const target = targetOf(setup, item);
      if (!target) return skip(`the ${item.chatProvider} connection its card was posted through is gone`);

      // Decide before taking a token or a pacing slot whether there is anything to send.
      let notify: Extract<EscalationPlan, { reply: unknown }> | null = null;
      switch (payload.type) {
        case "escalate_item": {
          const plan = await escalation.plan(item, payload, target);
          if ("skipped" in plan) return skip(plan.skipped);
          if ("done" in plan) return plan.done;
          notify = plan;
          break;
        }
        case "post_item":
          if (!hasCard(item) && !target.channelId) return skip("no channel saved");
          if (payload.confirm_after && !hasCard(item) && !(await trendAnomalousSince(db, item.trendId, new Date(payload.confirm_after)))) {
            return skip("its trend was not anomalous any more at the end of the trigger window");
          }
          break;
        case "update_item":
          if (!hasCard(item)) return skip("no card yet (its post shows the latest state)");
          if (payload.version !== undefined && payload.version < item.version) return skip(`superseded by version ${item.version}`);
          if (await hasNewerPendingChatUpdate(db, QUEUES.chatMessages, item.id, message.id)) return skip("superseded by a newer update");
          break;
        case "renotify_item":
          if (!hasCard(item)) return skip("no card to reply under");
          if (item.state !== "open") return skip(`item is ${item.state}`);
          break;
      }

      // Posts and replies take a pacing slot first, before a token or a card is made (a deferred message costs little).
      if (payload.type === "renotify_item" || notify) await pace(message, target.connection.id, notify?.card.channelId ?? item.chatChannelId!);
      else if (!hasCard(item)) await pace(message, target.connection.id, target.channelId!);
      try {
        const client = await clientFor(target);
        if (notify) {
          const result = await escalation.reply(item, notify, target, client);
          ctx.responded(client.successStatus);
          return result;
        }
        if (payload.type === "renotify_item") {
          const mention = deps.registry.find("chat", target.provider)?.parseMention(setup.settings.criticalMention);
          const reply = await client.postReply({ channelId: item.chatChannelId!, ts: item.chatMessageTs! }, renotifyText(item), mention ? [mention] : []);
          ctx.responded(client.successStatus);
          return { channel: reply.channelId, ts: reply.ts };
        }
        if (hasCard(item)) {
          const result = await update(item, setup, client);
          ctx.responded(client.successStatus);
          return result;
        }
        const posted = await postRouted(item, setup, target, client);
        ctx.responded(posted.client.successStatus);
        return posted.result;
      } catch (err) {
        if (err instanceof ProviderError && err.kind === "unauthorized")
          await deps.connections.markNeedsReauth(target.connection.id, err.message).catch((e) => logger.warn({ err: String(e) }, "needs_reauth not recorded"));
        throw err;
      }
    },

    /**
     * A message that failed for good is kept in the item's history (the API shows it as chat.delivery_error); an
     * escalation reply that failed moves its chain on without it.
     */
    async onFinal(message, outcome, error) {
      if (outcome !== "failed" && outcome !== "unknown") return;
      const item = await findOperatorItem(db, message.payload.item_id);
      if (!item) return;
      const why = error?.message ?? message.lastError ?? outcome;
      await db.$transaction((tx) => appendOperatorItemEvents(tx, [{
        itemId: item.id, accountId: item.accountId, action: outcome === "failed" ? "delivery_failed" : "delivery_unknown", fromState: item.state, toState: item.state, actor: SYSTEM_ACTOR,
        version: item.version, data: { message_id: message.id, type: message.payload.type, error: why },
      }]));
      if (message.payload.type !== "escalate_item") return; // only an escalation step has a chain to move on
      const setup = await chatSetupOf(db, deps.registry, item.accountId, config.OPERATOR_RENOTIFY_SECONDS);
      const target = setup && targetOf(setup, item);
      if (target) await escalation.failed(item, message.payload, target, why);
    },
  };
}

export const chatMessages = outboxProcessor(QUEUES.chatMessages, chatMessageHandler);
