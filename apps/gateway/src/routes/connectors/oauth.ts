import type { z } from "zod";
import { isOAuth, oauthClientOf, type OAuthManifest } from "@trendgate/connector-core";
import { callbackAnswer, ConnectionsError } from "@trendgate/connections";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { AuthorizationQuery, AuthorizationStart, CALLBACK_ERRORS, ConnectionList, OAUTH_CALLBACK_PATH, OAuthCallbackQuery } from "@trendgate/contracts";
import { ApiError } from "../../http/api-error.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { validateRequest } from "../../http/validate.ts";
import { connectionRoutesOf, hasConnectionRoutes } from "./connection.ts";
import { basePathOf, connectHintOf } from "./paths.ts";

// The browser OAuth flow of every OAuth provider in the registry, generated from its manifest under its base path:
//   GET    {base}/auth        the consent page's URL and a one-time state (e.g. /api/integrations/chat/auth)
// and the one public callback every provider sends the browser back to; with them the GET/DELETE {base}/connection
// routes of every provider that has a connection row, OAuth or credentials (./connection.ts). The lifecycle itself is
// @trendgate/connections.

const TAG = "Connections";

function startError(err: unknown): unknown {
  if (!(err instanceof ConnectionsError)) return err;
  if (err.code === "provider_not_configured") return new ApiError("provider_not_configured", err.message);
  if (err.code === "return_url_not_allowed") {
    return new ApiError("validation_failed", err.message, { errors: [{ location: "query", path: "return_url", message: err.message, code: "custom" }] });
  }
  return err;
}

function authRoutes(m: OAuthManifest): RouteDef[] {
  const base = basePathOf(m);
  const name = m.displayName;
  return [
    defineRoute({
      method: "get", path: `${base}/auth`, operationId: `get${m.operationName}Authorization`, tag: TAG, auth: "apiKey",
      summary: `Start connecting ${name}: the authorization URL to open in a browser`,
      description:
        `Answers the URL of ${name}'s consent page and the flow's state. Open the URL in the user's browser; ${name} sends it back to ` +
        `\`GET ${OAUTH_CALLBACK_PATH}\`, which stores the connection (tokens encrypted, never returned) and shows a page, or redirects ` +
        `to \`return_url\`. The state works once and expires after OAUTH_STATE_TTL_SECONDS (10 minutes by default). ` +
        `Answers 501 \`provider_not_configured\` naming the variables to set when this server has no ${name} OAuth client.`,
      query: AuthorizationQuery,
      responses: {
        200: { description: "The authorization URL and its state", schema: AuthorizationStart },
        501: { description: `No ${name} OAuth client is configured (\`provider_not_configured\`; the detail names the variables)` },
      },
      async handler({ deps, auth, query }) {
        try {
          const body = await deps.connections.startAuthorization(auth.accountId, m.id, { returnUrl: query.return_url });
          return { status: 200, body, headers: { "Cache-Control": "no-store" } };
        } catch (err) {
          throw startError(err);
        }
      },
    }),
  ];
}

const callbackRoute = defineRoute({
  method: "get", path: OAUTH_CALLBACK_PATH, operationId: "completeOAuthAuthorization", tag: TAG, auth: "public", raw: true,
  summary: "Where providers send the browser back after consent (no API key)",
  description:
    "Checks the one-time state, exchanges the code, stores the connection, and answers a small HTML page saying what was connected " +
    "or what went wrong; or, when a `return_url` was given at `auth`, a 303 to it with `?connection=<provider>&status=connected|error` " +
    `and \`error=<code>\`. Codes: ${Object.entries(CALLBACK_ERRORS).map(([k, v]) => `\`${k}\`: ${v}`).join("; ")}. ` +
    "Every failure is recorded as a `connection.failed` account event when the state names the account. " +
    "A request with neither `state` nor `error` is not a provider's redirect: 400 problem.",
  query: OAuthCallbackQuery,
  responses: {
    200: { description: "HTML page: connected" },
    303: { description: "Redirect to the `return_url` given at `auth`", headers: { Location: "return_url with connection, status and error" } },
    400: { description: "HTML page: unknown, used or expired state, or the provider's error; or a problem when the request is not a provider's redirect" },
    403: { description: "HTML page: the user declined (`access_denied`)" },
    501: { description: "HTML page: the provider's client is no longer configured" },
    502: { description: "HTML page: exchanging the code failed" },
  },
  async handler({ deps, req, res }) {
    const [query] = validateRequest([{ location: "query", schema: OAuthCallbackQuery, value: req.query }]) as [z.infer<typeof OAuthCallbackQuery>];
    if (!query.state && !query.error) {
      throw new ApiError("bad_request", "This is where OAuth providers send the browser back: it needs `state` with `code` (or `error`)");
    }
    const answer = callbackAnswer(await deps.connections.completeAuthorization(query));
    res.status(answer.status).set(answer.headers).send(answer.body);
  },
});

// One read for a page that shows every connection, where a GET …/connection per provider would answer 404 for each
// provider not connected.
const listRoute = defineRoute({
  method: "get", path: "/api/integrations/connections", operationId: "listConnections", tag: TAG, auth: "apiKey",
  summary: "Every provider this server connects, with the account's connection to each",
  description: "Chat, workflow, conversions and ads providers in the registry's order, each with where its routes are, whether it is connected in " +
    "the browser and whether this server can (`configured`), how to connect it otherwise (`connect_hint`, from its manifest), and the " +
    "account's connection as `GET {base_path}/connection` shows it (null when not connected). Social connectors: `GET /api/integrations/social/providers`.",
  responses: { 200: { description: "The providers", schema: ConnectionList } },
  async handler({ deps, auth }) {
    const connections = await deps.connections.list(auth.accountId);
    const data = deps.registry.manifests().filter((m) => isOAuth(m) || hasConnectionRoutes(m)).map((m) => ({
      provider: m.id, kind: m.kind, display_name: m.displayName, base_path: basePathOf(m), oauth: isOAuth(m),
      configured: !isOAuth(m) || !("missing" in oauthClientOf(m, deps.config.PROVIDER_ENV)), connect_hint: connectHintOf(m),
      connection: connections.get(m.id) ?? null,
    }));
    return { status: 200, body: { data } };
  },
});

/** The callback, the connection list, the authorization route of every OAuth provider in `registry` and the connection routes of every provider that has them. */
export function oauthRoutes(registry: ConnectorRegistry): RouteDef[] {
  return [callbackRoute, listRoute, ...registry.manifests().flatMap((m) => [
    ...(isOAuth(m) ? authRoutes(m) : []),
    ...(isOAuth(m) || hasConnectionRoutes(m) ? connectionRoutesOf(m) : []),
  ])];
}
