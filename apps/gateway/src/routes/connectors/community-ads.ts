import { z } from "zod";
import { conversionBatchGroup, type ConversionsConnector } from "@trendgate/connector-conversions";
import type { ConnectorRegistry } from "@trendgate/connectors";
import {
  CommunityAdsEvent, CommunityAdsEventList, CommunityAdsPushAccepted, CommunityAdsSelection, CommunityAdsTokenSaved, ConversionMessagePayload, Id, OutboxReplayed, QUEUES,
} from "@trendgate/contracts";
import {
  addOutboxMessageGrouped, addOutboxMessages, findAccountOutboxMessage, findOutboxMessageByDedupKey, newId, outboxMessageAttempts, saveConnectionSelection,
  storeAuthorizedConnection, type ConnectionRow, type Db, type OutboxAttemptRow, type OutboxMessage, type OutboxRow, type Tx,
} from "@trendgate/db";
import { ApiError, notFound } from "../../http/api-error.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import type { GatewayDeps } from "../../deps.ts";
import { OutboxListQuery, outboxPage } from "./outbox-list.ts";
import { replayOutbox } from "./outbox-replay.ts";
import { basePathOf } from "./paths.ts";
import { connectionOrConflict } from "./provider-problem.ts";

// The community-ads connector's routes, besides the OAuth routes the framework generates for it
// (GET {base}/auth, GET/DELETE {base}/connection): a conversion access token instead of OAuth, the selection
// (ad account, pixel, default event), the push (queued on the shared outbox, sent in batches per pixel by the
// conversion-events worker), the pushed events' delivery records and the replay of a failed one. Bodies are the
// provider's schemas.

const TAG = "Community-ads connector";

/** The community-ads routes of the registry's conversions provider (none when it has none). */
export function communityAdsRoutes(registry: ConnectorRegistry): RouteDef[] {
  return registry.ofKind("conversions").length ? routesOf(registry.single("conversions")) : [];
}

const fieldError = (path: string, message: string, code = "custom") =>
  new ApiError("validation_failed", `${path}: ${message}`, { errors: [{ location: "body", path, message, code }] });

const selectionOf = (conn: ConnectionRow): CommunityAdsSelection | null => {
  const s = (conn.selection ?? {}) as Partial<CommunityAdsSelection>;
  return s.pixel_id && s.account_id && s.event_name ? (s as CommunityAdsSelection) : null;
};

/** A queued conversion event as the API shows it (one event, and each item of the listing). */
function eventOf(m: OutboxMessage, attempts: OutboxAttemptRow[]): CommunityAdsEvent {
  const p = ConversionMessagePayload.parse(m.payload);
  return {
    id: m.id, status: m.status, event_name: p.event.event_name, conversion_id: p.event.data.conversion_id, pixel_id: p.pixel_id, test_id: p.test_id,
    attempts: attempts.map((a) => ({ attempt: a.attempt, outcome: a.outcome, response_status: a.responseStatus, error: a.errorMessage, at: a.createdAt.toISOString() })),
    last_error: m.lastError, created_at: m.createdAt.toISOString(), completed_at: m.completedAt?.toISOString() ?? null,
  };
}

function routesOf(connector: ConversionsConnector): RouteDef[] {
  const BASE = basePathOf(connector.manifest);
  const NAME = connector.manifest.displayName;
  const SelectionBody = connector.manifest.schemas.selection!;
  const TokenBody = connector.tokenBody;
  const PushBody = connector.pushBody;
  const authorizeFirst = `authorize via GET ${BASE}/auth or store a conversion access token with PUT ${BASE}/token`;

  async function connectionOf(deps: GatewayDeps, accountId: string): Promise<{ connector: ConversionsConnector; conn: ConnectionRow }> {
    const conn = await connectionOrConflict(deps, accountId, connector.manifest.id, { name: NAME, reconnect: authorizeFirst, usable: false });
    return { connector, conn };
  }

  return [
    defineRoute({
      method: "put", path: `${BASE}/token`, operationId: "putCommunityAdsToken", tag: TAG, auth: "apiKey",
      summary: `Connect ${NAME} with a conversion access token (instead of the browser flow)`,
      description:
        `Stores a conversion access token made in ${NAME}'s Events Manager (it does not expire; deleting it there revokes it) as the ` +
        "account's connection, encrypted and never returned. It replaces an OAuth connection and vice versa (one connection per account); " +
        "the saved selection is kept. A token the provider later refuses sets the connection to `needs_reauth`: queued events wait.",
      body: TokenBody,
      responses: { 200: { description: "Stored", schema: CommunityAdsTokenSaved } },
      async handler({ deps, auth, body }) {
        const token = (body as { access_token: string }).access_token;
        const row = await storeAuthorizedConnection(deps.db, {
          accountId: auth.accountId, provider: connector.manifest.id, kind: connector.manifest.kind,
          credentialsSealed: deps.secrets.seal(JSON.stringify({ access_token: token, token_type: "bearer" })),
          tokenExpiresAt: null, scopes: ["adsconversions"], externalAccount: {},
        });
        return { status: 200, body: { provider: row.provider, status: row.status, credential: "conversion_access_token" as const } };
      },
    }),
    defineRoute({
      method: "put", path: `${BASE}/selection`, operationId: "putCommunityAdsSelection", tag: TAG, auth: "apiKey",
      summary: "Choose the ad account, the pixel and the default event",
      description: "Formats are checked (`t2_…` or bare account id, `a2_…` pixel id); `event_name` is a standard type (`purchase`, `lead`, `sign_up`, `add_to_cart`, ...) or your own name, sent as CUSTOM. Needs a connection (409 `not_connected`).",
      body: SelectionBody,
      responses: { 200: { description: "The saved selection", schema: CommunityAdsSelection }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth, body }) {
        const { conn } = await connectionOf(deps, auth.accountId);
        await saveConnectionSelection(deps.db, conn.id, body);
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/selection`, operationId: "getCommunityAdsSelection", tag: TAG, auth: "apiKey",
      summary: "The saved ad account, pixel and default event",
      description: "As PUT saved it. 404 `not_found` when nothing is selected.",
      responses: { 200: { description: "The saved selection", schema: CommunityAdsSelection }, 404: { description: "No selection saved" }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth }) {
        const { conn } = await connectionOf(deps, auth.accountId);
        const selection = selectionOf(conn);
        if (!selection) throw notFound(`${NAME} selection`);
        return { status: 200, body: selection };
      },
    }),
    defineRoute({
      method: "post", path: `${BASE}/push`, operationId: "pushCommunityAdsEvent", tag: TAG, auth: "apiKey", idempotent: "transactional",
      summary: "Queue a conversion event",
      description:
        `202: the event is queued and sent to the selected pixel in a batch (v3 Conversions API). Personal identifiers are sent ` +
        "SHA-256-hashed (normalised first), the user agent as is. `event_at` must be at most 7 days old and not in the future (422 naming " +
        "`data.event_at`). Events are de-duplicated on `conversion_id` (a second push answers the first one's id with `duplicate: true`). " +
        "Needs a connection and a selection (409). With Idempotency-Key, a retried request answers the same.",
      body: PushBody,
      responses: {
        202: { description: "Queued", schema: CommunityAdsPushAccepted },
        409: { description: "`not_connected`: no connection or no selection" },
        422: { description: "`validation_failed`: e.g. `data.event_at` out of range" },
      },
      async handler({ deps, auth, body, atomically, idempotencyKey }) {
        const { connector, conn } = await connectionOf(deps, auth.accountId);
        const selection = selectionOf(conn);
        if (!selection) throw new ApiError("not_connected", `No pixel is selected: PUT ${BASE}/selection first`);
        const b = body as { event_name?: string; test_id?: string; data: Record<string, unknown> & { event_at?: number; conversion_id?: string } };
        const now = Date.now();
        const eventAt = b.data.event_at ?? now;
        if (eventAt < now - connector.limits.maxEventAgeMs) throw fieldError("data.event_at", `${new Date(eventAt).toISOString()} is more than 7 days old; ${NAME} refuses older events`, "too_old");
        // Not in the future: our clock is the reference (the provider tolerates a few minutes of skew; we allow none beyond 1 min).
        if (eventAt > now + 60_000) throw fieldError("data.event_at", `${new Date(eventAt).toISOString()} is in the future`, "in_future");
        const id = newId("obx");
        const conversionId = b.data.conversion_id ?? id;
        const payload: ConversionMessagePayload = {
          pixel_id: selection.pixel_id, ad_account_id: selection.account_id, test_id: b.test_id ?? null,
          event: connector.hashIdentifiers({ event_name: b.event_name ?? selection.event_name, data: { ...b.data, event_at: eventAt, conversion_id: conversionId } }),
        };
        const dedupKey = `${conn.id}:${b.test_id ? `test:${b.test_id}:` : ""}${conversionId}`;
        const message = { queue: QUEUES.conversionEvents, accountId: auth.accountId, connectionId: conn.id, subjectId: conversionBatchGroup(payload), dedupKey, payload } as const;
        const queued = (outbox: OutboxRow[]) => ({ status: 202, body: { id: outbox[0].id, status: "pending", conversion_id: conversionId, duplicate: false }, outbox });
        const duplicate = async (q: Db | Tx) => {
          const first = await findOutboxMessageByDedupKey(q, QUEUES.conversionEvents, dedupKey);
          return { status: 202, body: { id: first?.id ?? id, status: first?.status ?? "pending", conversion_id: conversionId, duplicate: true } };
        };
        // Without an Idempotency-Key the message is the request's only write: it goes in one statement with the other
        // pushes of the moment (one commit for all); with one, the answer is recorded in the message's transaction.
        if (!idempotencyKey) {
          const row = await addOutboxMessageGrouped(deps.db, message);
          return row ? queued([row]) : duplicate(deps.db);
        }
        return atomically(async (tx) => {
          const outbox = await addOutboxMessages(tx, [message]);
          return outbox.length ? queued(outbox) : duplicate(tx);
        });
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/events/{id}`, operationId: "getCommunityAdsEvent", tag: TAG, auth: "apiKey",
      summary: "One pushed conversion event and its delivery attempts",
      params: z.object({ id: Id.meta({ description: "An event id from the push" }) }),
      responses: { 200: { description: "The event", schema: CommunityAdsEvent }, 404: { description: "No such event" } },
      async handler({ deps, auth, params }) {
        const m = await findAccountOutboxMessage(deps.db, auth.accountId, QUEUES.conversionEvents, params.id);
        if (!m) throw notFound("Event");
        const attempts = await outboxMessageAttempts(deps.db, m.id);
        return { status: 200, body: eventOf(m, attempts) };
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/events`, operationId: "listCommunityAdsEvents", tag: TAG, auth: "apiKey",
      summary: "Pushed conversion events and their delivery attempts, newest first",
      description: "Each item as GET …/events/{id} answers it; `status` filters (`pending`, `succeeded`, `failed`, `cancelled`). Pass `next_cursor` back as `cursor`.",
      query: OutboxListQuery,
      responses: { 200: { description: "A page of events", schema: CommunityAdsEventList } },
      async handler({ deps, auth, query }) {
        const page = await outboxPage(deps, auth.accountId, QUEUES.conversionEvents, query);
        return { status: 200, body: { data: page.rows.map(({ message, attempts }) => eventOf(message, attempts)), next_cursor: page.next_cursor } };
      },
    }),
    defineRoute({
      method: "post", path: `${BASE}/events/{id}/replay`, operationId: "replayCommunityAdsEvent", tag: TAG, auth: "apiKey", idempotent: "transactional",
      summary: "Send a failed conversion event again",
      description: "One more attempt now, with the same event (and conversion_id, which the provider de-duplicates on). Only for `failed` (or `unknown`) events: 409 `conflict` otherwise; 404 when the account has no such event.",
      params: z.object({ id: Id.meta({ description: "An event id from the push" }) }),
      responses: { 202: { description: "Queued", schema: OutboxReplayed }, 404: { description: "No such event" }, 409: { description: "`conflict`: not failed" } },
      async handler({ deps, auth, params, atomically }) {
        return replayOutbox(deps, atomically, { accountId: auth.accountId, queue: QUEUES.conversionEvents, messageId: params.id, shownId: params.id, what: "Event" });
      },
    }),
  ];
}
