import { ProviderError } from "@trendgate/connector-core";
import type { ChatConnector } from "@trendgate/connector-chat";
import type { ConnectorRegistry } from "@trendgate/connectors";
import type { EscalationStep, OperatorRoutes, OperatorRoutesBody } from "@trendgate/contracts";
import { accountOnCallScheduleIds, accountWebhookIds, connectionStates, operatorRouteIds, operatorRoutesOf, saveOperatorRoutes, type Db } from "@trendgate/db";
import { chatClientOf, chatSetupOf, escalationSteps } from "@trendgate/operator";
import { ApiError } from "../http/api-error.ts";
import type { GatewayDeps } from "../deps.ts";

// Operator routing rules over REST: read them with the default route, and save the whole ordered list (a
// partial edit of an ordered list is a reorder problem the client solves better). A rule sent with its id is that
// stored rule, edited in place (its items keep their rule); the rest are new, and stored rules left out are deleted.
// The rules are checked against what they name: a chat provider the account is connected to, a channel there the
// app can post to (asked of the provider; a public one the bot is not in is joined, as the alerts channel is), webhook
// subscriptions and on-call schedules of the account, the account's own rules.

type FieldError = { location: "body"; path: string; message: string; code: string };

export async function readOperatorRoutes(db: Db, registry: ConnectorRegistry, accountId: string, renotifySeconds: number): Promise<OperatorRoutes> {
  const setup = await chatSetupOf(db, registry, accountId, renotifySeconds);
  // Without a chat connection there is no setup, but the default escalation may be stored already.
  const stored = setup ? null : (await operatorRoutesOf(db, [accountId])).get(accountId);
  return {
    routes: (setup?.routes ?? []).map((r) => ({
      id: r.id, position: r.position, name: r.name, match: r.match as OperatorRoutes["routes"][number]["match"], provider: r.provider,
      channel_id: r.channelId, escalation: escalationSteps(r.escalation), updated_at: r.updatedAt.toISOString(),
    })),
    default: {
      provider: setup?.connection.provider ?? null,
      channel_id: setup?.channelId ?? null,
      escalation: setup ? setup.defaultEscalation : escalationSteps(stored?.defaultEscalation),
    },
  };
}

type RoutesDeps = Pick<GatewayDeps, "db" | "registry" | "connections" | "config">;

/**
 * Each route's channel as its provider sees it: missing, archived or private without the bot is the rule's error (a
 * rule that could never post); a public channel the bot is not in is joined. A provider that cannot answer now
 * (down, rate limited, credentials refused) does not block the save: a post that fails later falls back to the
 * default route and says so (operator.route_failed).
 */
async function checkChannels(deps: RoutesDeps, accountId: string, routes: OperatorRoutesBody["routes"], connected: Set<string>, errors: FieldError[]) {
  const checked = new Map<string, FieldError | null>();
  for (const [i, r] of routes.entries()) {
    const connector = deps.registry.find("chat", r.provider);
    const key = `${r.provider}\u0000${r.channel_id}`;
    if (!connector || !connected.has(r.provider)) continue; // reported on the provider field
    if (!checked.has(key)) checked.set(key, await channelProblem(deps, connector, accountId, r.provider, r.channel_id));
    const problem = checked.get(key);
    if (problem) errors.push({ ...problem, path: `routes.${i}.channel_id`, message: `rule ${JSON.stringify(r.name)}: ${problem.message}` });
  }
}

async function channelProblem(deps: RoutesDeps, connector: ChatConnector, accountId: string, provider: string, channelId: string): Promise<FieldError | null> {
  const conn = await deps.connections.find(accountId, provider);
  if (!conn || conn.status === "needs_reauth") return null; // not checkable now
  const problem = (message: string, code: string): FieldError => ({ location: "body", path: "", message, code });
  const name = connector.manifest.displayName;
  try {
    const client = await chatClientOf(deps.connections, deps.config.PROVIDER_ENV, connector, conn);
    const channel = await client.channelInfo(channelId);
    if (channel.isArchived) return problem(`channel ${channelId} is archived`, "not_found");
    if (channel.isMember) return null;
    if (channel.isPrivate) return problem(`#${channel.name} is private and the app's bot is not in it: invite it there first`, "bot_not_in_channel");
    await client.join(channel.id);
    return null;
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === "not_found") return problem(`no channel ${channelId} is visible to the ${name} app; if it is private, invite the bot there first`, "not_found");
    if (err.kind === "bad_request") return problem(err.message, "bot_not_in_channel"); // a join the provider refuses (Teams: app not installed in the team)
    return null;
  }
}

export async function writeOperatorRoutes(deps: RoutesDeps, accountId: string, body: OperatorRoutesBody, renotifySeconds: number): Promise<OperatorRoutes> {
  const { db, registry } = deps;
  const errors: FieldError[] = [];
  const connected = new Set((await connectionStates(db, accountId, { kind: "chat" })).map((c) => c.provider));
  const named = [body.default_escalation, ...body.routes.map((r) => r.escalation)].flat().flatMap((s) => (s.type === "notify_webhook" ? [s.webhook_id] : []));
  const webhooks = new Set(await accountWebhookIds(db, accountId, named));
  const scheduled = [body.default_escalation, ...body.routes.map((r) => r.escalation)].flat().flatMap((s) => (s.type === "notify_on_call" ? [s.schedule_id] : []));
  const schedules = new Set(await accountOnCallScheduleIds(db, accountId, scheduled));
  const stored = new Set(await operatorRouteIds(db, accountId));
  const unknownRule = (i: number): FieldError =>
    ({ location: "body", path: `routes.${i}.id`, message: "not a rule of this account (deleted meanwhile? read the rules again)", code: "not_found" });
  const checkSteps = (steps: EscalationStep[], at: string) => steps.forEach((s, j) => {
    if (s.type === "notify_webhook" && !webhooks.has(s.webhook_id))
      errors.push({ location: "body", path: `${at}.${j}.webhook_id`, message: `no webhook subscription ${s.webhook_id} in this account`, code: "not_found" });
    if (s.type === "notify_on_call" && !schedules.has(s.schedule_id))
      errors.push({ location: "body", path: `${at}.${j}.schedule_id`, message: `no on-call schedule ${s.schedule_id} in this account`, code: "not_found" });
  });
  body.routes.forEach((r, i) => {
    if (r.id !== undefined && !stored.has(r.id)) errors.push(unknownRule(i));
    if (!registry.find("chat", r.provider)) {
      const known = registry.ofKind("chat").map((c) => c.manifest.id).join(", ");
      errors.push({ location: "body", path: `routes.${i}.provider`, message: `not a chat provider (one of: ${known})`, code: "invalid_value" });
    } else if (!connected.has(r.provider)) {
      errors.push({ location: "body", path: `routes.${i}.provider`, message: `the account is not connected to ${r.provider}: authorize it first`, code: "not_connected" });
    }
    checkSteps(r.escalation, `routes.${i}.escalation`);
  });
  checkSteps(body.default_escalation, "default_escalation");
  await checkChannels(deps, accountId, body.routes, connected, errors);
  const refuse = (list: FieldError[]) => new ApiError("validation_failed", list.map((e) => `${e.path}: ${e.message}`).join("; "), { errors: list });
  if (errors.length) throw refuse(errors);
  const saved = await saveOperatorRoutes(db, accountId, body.routes.map((r) => ({
    id: r.id, name: r.name, match: r.match, provider: r.provider, channelId: r.channel_id, escalation: r.escalation,
  })), body.default_escalation);
  // A save of the account that committed since the check above deleted a rule this one names.
  if (saved.unknown.length) throw refuse(saved.unknown.map(unknownRule));
  return readOperatorRoutes(db, registry, accountId, renotifySeconds);
}
