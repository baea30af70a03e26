import type { Db, Tx } from "./client.ts";
import { Prisma, type WebhookExecution, type WebhookSubscription } from "./generated/client.ts";
import { newId, type IdPage } from "./ids.ts";

// The webhooks API's reads and writes of subscriptions and their execution history. Deliveries (firing, sending,
// re-queueing) are in webhook-deliveries.ts; attempt records in webhook-attempts.ts.

export type WebhookSubscriptionRow = WebhookSubscription;
export type WebhookExecutionRow = WebhookExecution;

export interface NewWebhookSubscription {
  accountId: string;
  url: string;
  triggerType: string;
  deliveryMode: string;
  thresholdValue: number;
  cooldownSeconds: number;
  category: string | null;
  description: string | null;
  eventTypes: string[];
  /** A validated WebhookFilter (JSON), or none. */
  filter: object | null;
  headersCiphertext: string | null;
  headerNames: string[];
  /** A validated BodyTemplate (JSON), or none. */
  bodyTemplate: object | null;
  secretCiphertext: string;
  sensitivity?: string;
  triggerWindowMinutes?: number;
  recoveryWindowMinutes?: number;
  /** Deliveries per second at most; null: unlimited. */
  rateLimit?: number | null;
}

export const createWebhookSubscription = (db: Db | Tx, { filter, bodyTemplate, ...s }: NewWebhookSubscription) =>
  db.webhookSubscription.create({ data: { id: newId("wh"), ...s, filter: jsonOrNull(filter), bodyTemplate: jsonOrNull(bodyTemplate) } });

const jsonOrNull = (v: object | null) => (v === null ? Prisma.DbNull : (v as Prisma.InputJsonValue));

/** One of the account's subscriptions, or null. */
export const findAccountWebhook = (db: Db | Tx, accountId: string, id: string) =>
  db.webhookSubscription.findFirst({ where: { id, accountId } });

/** Which of these ids are subscriptions of the account. */
export const accountWebhookIds = async (db: Db | Tx, accountId: string, ids: string[]): Promise<string[]> =>
  ids.length ? (await db.webhookSubscription.findMany({ where: { accountId, id: { in: ids } }, select: { id: true } })).map((w) => w.id) : [];

/** A page of the account's subscriptions, newest first. */

export const listWebhookSubscriptions = (db: Db, accountId: string, page: IdPage) =>
  db.webhookSubscription.findMany({ where: { accountId, ...page.after }, orderBy: { id: "desc" }, take: page.take });

/** What PATCH may change; a field left undefined keeps its value. */
export type WebhookSubscriptionChanges = Pick<Prisma.WebhookSubscriptionUpdateInput,
  "url" | "triggerType" | "deliveryMode" | "thresholdValue" | "cooldownSeconds" | "category" | "description" | "eventTypes" | "headersCiphertext" | "headerNames"
  | "sensitivity" | "triggerWindowMinutes" | "recoveryWindowMinutes" | "rateLimit">
  & { filter?: object | null; bodyTemplate?: object | null };

export const updateWebhookSubscription = (db: Db | Tx, id: string, { filter, bodyTemplate, ...changes }: WebhookSubscriptionChanges) =>
  db.webhookSubscription.update({
    where: { id },
    data: {
      ...changes, ...(filter === undefined ? {} : { filter: jsonOrNull(filter) }),
      ...(bodyTemplate === undefined ? {} : { bodyTemplate: jsonOrNull(bodyTemplate) }),
    },
  });

/** Firings while paused are kept as pending deliveries (sent on resume). */
export const pauseWebhookSubscription = (db: Db | Tx, id: string) =>
  db.webhookSubscription.update({ where: { id }, data: { status: "paused" } });

/** Active again, the disabled reason and the failing streak cleared. The caller re-queues its pending deliveries. */
export const resumeWebhookSubscription = (db: Db | Tx, id: string) =>
  db.webhookSubscription.update({ where: { id }, data: { status: "active", disabledReason: null, failingSince: null } });

/** The new signing secret; the previous one keeps signing until `previousSecretExpiresAt` (null: not at all). */
export async function saveWebhookSecret(db: Db | Tx, id: string, s: { secretCiphertext: string; previousSecretCiphertext: string | null; previousSecretExpiresAt: Date | null }): Promise<void> {
  await db.webhookSubscription.update({ where: { id }, data: s });
}

/**
 * Deletes a subscription and its execution history in one transaction. Executions have no foreign key (see
 * schema.prisma) so they are deleted here; deliveries cascade.
 */
export async function deleteWebhookSubscription(db: Db, id: string): Promise<void> {
  await db.$transaction([
    db.webhookExecution.deleteMany({ where: { subscriptionId: id } }),
    db.webhookSubscription.delete({ where: { id } }),
  ]);
}

/** A page of a subscription's executions, newest first, optionally only those of one outcome, trigger or time range. */
export const listWebhookExecutions = (db: Db, subscriptionId: string, page: IdPage, filter: ExecutionFilter = {}) =>
  db.webhookExecution.findMany({
    where: {
      subscriptionId, ...page.after,
      ...(filter.outcome ? { outcome: filter.outcome } : {}),
      ...(filter.trigger ? { trigger: filter.trigger } : {}),
      ...(filter.since || filter.until ? { createdAt: { ...(filter.since ? { gte: filter.since } : {}), ...(filter.until ? { lt: filter.until } : {}) } } : {}),
    },
    orderBy: { id: "desc" }, take: page.take,
  });

export interface ExecutionFilter {
  outcome?: string;
  trigger?: string;
  since?: Date;
  until?: Date;
}

/** One execution of the subscription, or null. */
export const findWebhookExecution = (db: Db, subscriptionId: string, id: string) =>
  db.webhookExecution.findFirst({ where: { id, subscriptionId } });
