import {
  OPERATOR_HISTORY_MAX, OperatorActionBody, OperatorItem, OperatorItemIdParam, OperatorItemList, OperatorItemsQuery, OperatorItemWithHistory, QUEUES,
  type OperatorItemEvent, type OperatorItemState,
} from "@trendgate/contracts";
import { chatDeliveryErrors, findOperatorItem, listOperatorItems, operatorItemHistory, type OperatorItemEventRow, type OperatorItemRow } from "@trendgate/db";
import { applyActionIn, credentialActor } from "@trendgate/operator";
import { OperatorRoutes, OperatorRoutesBody } from "@trendgate/contracts";
import { readOperatorRoutes, writeOperatorRoutes } from "../services/operator-routes.ts";
import { ApiError, notFound } from "../http/api-error.ts";
import { keysetPage } from "../http/paginate.ts";
import { defineRoute } from "../http/route.ts";
import type { GatewayDeps } from "../deps.ts";

// The operator queue over REST: list, read (with history) and act on items. Actions go through the
// same state machine as chat buttons (packages/operator), with the version check; a card update is queued in the
// same transaction and dispatched after the commit.

const BASE = "/api/operator/items";
const TAG = "Operator queue";
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toOperatorItem(r: OperatorItemRow, deliveryError: string | null): OperatorItem {
  return {
    id: r.id, state: r.state as OperatorItemState, severity: r.severity as OperatorItem["severity"], title: r.title, category: r.category,
    summary: r.summary, velocity: r.velocity, briefing_url: r.briefingUrl, trend_id: r.trendId, occurrences: r.occurrences, version: r.version,
    snoozed_until: iso(r.snoozedUntil), acknowledged_by: r.acknowledgedBy, acknowledged_at: iso(r.acknowledgedAt),
    resolved_by: r.resolvedBy, resolved_at: iso(r.resolvedAt),
    route_id: r.routeId, source: r.source as OperatorItem["source"],
    chat: { provider: r.chatProvider, channel_id: r.chatChannelId, message_ts: r.chatMessageTs, delivery_error: deliveryError },
    created_at: r.createdAt.toISOString(), updated_at: r.updatedAt.toISOString(),
  };
}

const toEvent = (e: OperatorItemEventRow): OperatorItemEvent => ({
  id: e.id, action: e.action, from_state: e.fromState, to_state: e.toState, actor: e.actor, version: e.version,
  data: e.data as Record<string, unknown>, created_at: e.createdAt.toISOString(),
});

async function withDeliveryErrors(deps: GatewayDeps, rows: OperatorItemRow[]): Promise<OperatorItem[]> {
  const errors = await chatDeliveryErrors(deps.db, QUEUES.chatMessages, rows.map((r) => r.id));
  return rows.map((r) => toOperatorItem(r, errors.get(r.id) ?? null));
}

export const operatorRoutes = [
  defineRoute({
    method: "get", path: "/api/operator/routes", operationId: "getOperatorRoutes", tag: TAG, auth: "apiKey",
    summary: "Routing rules and escalation of operator items",
    description: "The ordered rules (first match wins) and the default route: the chat connection's saved channel and settings, with its escalation.",
    responses: { 200: { description: "The rules and the default route", schema: OperatorRoutes } },
    async handler({ deps, auth }) {
      return { status: 200, body: await readOperatorRoutes(deps.db, deps.registry, auth.accountId, deps.config.OPERATOR_RENOTIFY_SECONDS) };
    },
  }),
  defineRoute({
    method: "put", path: "/api/operator/routes", operationId: "putOperatorRoutes", tag: TAG, auth: "apiKey",
    summary: "Replace the routing rules and the default escalation",
    description: "The whole ordered list at once. A rule sent with the `id` GET gave it is that rule, edited in place: it keeps its id, and the items " +
      "it routes keep it; a rule without `id` is new; a stored rule left out is deleted. Each rule names a chat provider the account is connected " +
      "to and a channel from its channel list, checked with the provider at save: a channel it does not show the app, or an archived one, answers " +
      "422 `not_found` at `routes.N.channel_id` naming the rule, a private one without the bot 422 `bot_not_in_channel`, and a public one the bot is " +
      "not in is joined (a provider that cannot answer now does not block the save; a post that fails later falls back to the default route and " +
      "raises `operator.route_failed`); `notify_webhook` steps name webhook subscriptions of the account, `notify_on_call` steps its on-call " +
      "schedules (/api/operator/schedules); an `id` must be one of the " +
      "account's rules, each given once (422 naming the field otherwise: `not_found`, `duplicate_route`). Items opened before keep their route; " +
      "a deleted rule's items post new cards to the default route. An item keeps the escalation chain it opened with: a save changes the chain " +
      "of items opened after it, not of those open now.",
    body: OperatorRoutesBody,
    responses: { 200: { description: "The stored rules", schema: OperatorRoutes } },
    async handler({ deps, auth, body }) {
      return { status: 200, body: await writeOperatorRoutes(deps, auth.accountId, body, deps.config.OPERATOR_RENOTIFY_SECONDS) };
    },
  }),
  defineRoute({
    method: "get", path: BASE, operationId: "listOperatorItems", tag: TAG, auth: "apiKey",
    summary: "List operator items, newest first",
    description: "High-priority trend events become operator items once the account has a chat connection (see docs/connectors.md › Operator queue). Filter by `state` and `severity`.",
    query: OperatorItemsQuery,
    responses: { 200: { description: "A page of items", schema: OperatorItemList } },
    async handler({ deps, auth, query }) {
      const filter = { states: query.state, severities: query.severity };
      const rows = await keysetPage(query, (p) => listOperatorItems(deps.db, auth.accountId, filter, { after: p.after, take: p.take }), (r) => r);
      return { status: 200, body: { data: await withDeliveryErrors(deps, rows.data), next_cursor: rows.next_cursor } };
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/{item_id}`, operationId: "getOperatorItem", tag: TAG, auth: "apiKey",
    summary: "One operator item with its history", params: OperatorItemIdParam,
    responses: { 200: { description: "The item and every change of it, oldest first", schema: OperatorItemWithHistory } },
    async handler({ deps, auth, params }) {
      const row = await findOperatorItem(deps.db, params.item_id, auth.accountId);
      if (!row) throw notFound("Operator item");
      const [item] = await withDeliveryErrors(deps, [row]);
      const history = await operatorItemHistory(deps.db, row.id, OPERATOR_HISTORY_MAX);
      return { status: 200, body: { ...item, history: history.map(toEvent) } };
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/{item_id}/actions`, operationId: "actOnOperatorItem", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Acknowledge, resolve, snooze or reopen an item",
    description:
      "Send the `version` you read: if the item changed since, nothing is done and the answer is 409 `version_conflict` " +
      "(the current version is in `detail` and `errors[0].message`). An action the item's state does not allow answers 422 " +
      "`invalid_transition`. The chat card is updated after the change.",
    params: OperatorItemIdParam, body: OperatorActionBody,
    responses: {
      200: { description: "The changed item", schema: OperatorItem },
      409: { description: "`version_conflict`: the item changed since you read it" },
    },
    async handler({ deps, auth, params, body, atomically }) {
      return atomically(async (tx) => {
        const r = await applyActionIn(tx, deps, {
          itemId: params.item_id, accountId: auth.accountId, action: body.action, version: body.version, snoozeMinutes: body.snooze_minutes,
          note: body.note, actor: credentialActor(auth.credential), actorName: auth.credential.label,
        });
        if (r.ok) return { status: 200, body: (await withDeliveryErrors(deps, [r.item]))[0], outbox: r.outbox };
        if (r.reason === "not_found") throw notFound("Operator item");
        if (r.reason === "version_conflict") {
          throw new ApiError("version_conflict", `The item is at version ${r.item.version} (${r.item.state}); you sent version ${body.version}. Read it again, then act if still needed.`, {
            errors: [{ location: "body", path: "version", message: `current version is ${r.item.version}`, code: "version_conflict" }],
          });
        }
        throw new ApiError("invalid_transition", `Cannot ${body.action} an item that is ${r.item.state}; allowed: ${r.allowed.join(", ") || "none"}`, {
          errors: [{ location: "body", path: "action", message: `not allowed from ${r.item.state}`, code: "invalid_transition" }],
        });
      });
    },
  }),
];
