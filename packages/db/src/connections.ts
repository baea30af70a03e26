import type { Db, Tx } from "./client.ts";
import type { Connection, Prisma } from "./generated/client.ts";
import { newId } from "./ids.ts";

// Browser-OAuth connections (one per account and provider). Tokens live only in `credentials_sealed` (SecretBox);
// everything else is plain so status can be shown without opening them.

export type ConnectionRow = Connection;

export const findConnection = (db: Db | Tx, accountId: string, provider: string) =>
  db.connection.findUnique({ where: { accountId_provider: { accountId, provider } } });

/** Every connection row of the account (OAuth and credential ones; social connectors have their own table). */
export const accountConnections = (db: Db | Tx, accountId: string) =>
  db.connection.findMany({ where: { accountId }, orderBy: [{ kind: "asc" }, { provider: "asc" }] });

export const findConnectionById = (db: Db | Tx, id: string) => db.connection.findUnique({ where: { id } });

export interface AuthorizedConnection {
  accountId: string;
  provider: string;
  kind: string;
  credentialsSealed: string;
  tokenExpiresAt: Date | null;
  scopes: string[];
  externalAccount: Record<string, string | null>;
}

/**
 * Creates or replaces the account's connection after a successful authorization: connected, new tokens, health
 * reset. The saved selection and settings are kept, unless the user connected a different external account (e.g.
 * another Slack workspace), whose channels the old selection does not name.
 */
export async function saveAuthorizedConnection(tx: Tx, c: AuthorizedConnection): Promise<ConnectionRow> {
  const before = await findConnection(tx, c.accountId, c.provider);
  const prior = (before?.externalAccount ?? {}) as Record<string, unknown>;
  const sameAccount = !before || Object.keys(prior).length === 0 || JSON.stringify(sortKeys(prior)) === JSON.stringify(sortKeys(c.externalAccount));
  const fields = {
    kind: c.kind, status: "connected", credentialsSealed: c.credentialsSealed, tokenExpiresAt: c.tokenExpiresAt, scopes: c.scopes,
    externalAccount: c.externalAccount as Prisma.InputJsonValue, lastError: null, lastErrorAt: null, refreshFailures: 0,
    refreshNotBefore: null, lastRefreshedAt: null,
  };
  return tx.connection.upsert({
    where: { accountId_provider: { accountId: c.accountId, provider: c.provider } },
    create: { id: newId("conn"), accountId: c.accountId, provider: c.provider, ...fields },
    update: { ...fields, ...(sameAccount ? {} : { selection: {} }) },
  });
}

/**
 * saveAuthorizedConnection in a transaction of its own, for callers that hold none (credentials stored directly
 * rather than through the OAuth callback). With `settings`, the connection's settings are replaced in the same transaction.
 */
export async function storeAuthorizedConnection(db: Db, c: AuthorizedConnection, opts: { settings?: unknown } = {}): Promise<ConnectionRow> {
  return db.$transaction(async (tx) => {
    const saved = await saveAuthorizedConnection(tx, c);
    return opts.settings === undefined ? saved : tx.connection.update({ where: { id: saved.id }, data: { settings: opts.settings as Prisma.InputJsonValue } });
  });
}

const sortKeys = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

/**
 * Locks the connection's row for the rest of the transaction (SELECT ... FOR UPDATE), waiting at most
 * `lockTimeoutMs` (then Postgres raises 55P03: see isLockTimeout), and returns the row as it is now.
 * The lock is what makes one refresh per connection across every worker and gateway process.
 */
export async function lockConnection(tx: Tx, id: string, lockTimeoutMs: number): Promise<ConnectionRow | null> {
  if (!Number.isInteger(lockTimeoutMs) || lockTimeoutMs < 1) throw new Error("lockTimeoutMs must be a positive integer");
  await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = '${lockTimeoutMs}ms'`);
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM connections WHERE id = ${id} FOR UPDATE`;
  return locked.length ? tx.connection.findUnique({ where: { id } }) : null;
}

/** Postgres gave up waiting for a row lock (lock_timeout). */
export function isLockTimeout(err: unknown): boolean {
  for (let e: any = err, depth = 0; e && depth < 6; e = e.cause, depth++) {
    if ([e.code, e.originalCode, e.meta?.code, e.kind?.code].includes("55P03")) return true;
    if (/lock timeout|canceling statement due to lock timeout/i.test(String(e.message ?? "") + String(e.originalMessage ?? ""))) return true;
  }
  return false;
}

export async function recordRefreshed(tx: Tx, id: string, r: { credentialsSealed: string; tokenExpiresAt: Date | null; scopes?: string[] }) {
  await tx.connection.update({
    where: { id },
    data: {
      credentialsSealed: r.credentialsSealed, tokenExpiresAt: r.tokenExpiresAt, ...(r.scopes ? { scopes: r.scopes } : {}),
      status: "connected", lastError: null, lastErrorAt: null, refreshFailures: 0, refreshNotBefore: null, lastRefreshedAt: new Date(),
    },
  });
}

export async function recordRefreshFailure(tx: Tx, id: string, f: { failures: number; notBefore: Date; error: string; status: "connected" | "error" }) {
  await tx.connection.update({
    where: { id },
    data: { refreshFailures: f.failures, refreshNotBefore: f.notBefore, lastError: f.error, lastErrorAt: new Date(), status: f.status },
  });
}

export async function setConnectionStatus(db: Db | Tx, id: string, status: "connected" | "error") {
  await db.connection.updateMany({ where: { id, status: { not: "needs_reauth" } }, data: { status } });
}

/** Sets needs_reauth; returns the row when this call changed it (so the account is told once). */
export async function setConnectionNeedsReauth(db: Db | Tx, id: string, reason: string): Promise<ConnectionRow | null> {
  const { count } = await db.connection.updateMany({
    where: { id, status: { not: "needs_reauth" } },
    data: { status: "needs_reauth", lastError: reason, lastErrorAt: new Date() },
  });
  return count ? db.connection.findUnique({ where: { id } }) : null;
}

export async function deleteConnection(db: Db | Tx, id: string): Promise<boolean> {
  const { count } = await db.connection.deleteMany({ where: { id } });
  return count > 0;
}

/**
 * Saves what the user selected on the connection (a connector's selection body, as validated), and with it the
 * sealed credentials when the selection carries a secret of its own (a workflow trigger's credential).
 */
export async function saveConnectionSelection(db: Db | Tx, id: string, selection: unknown, opts: { credentialsSealed?: string } = {}): Promise<void> {
  await db.connection.update({ where: { id }, data: { selection: selection as Prisma.InputJsonValue, ...(opts.credentialsSealed ? { credentialsSealed: opts.credentialsSealed } : {}) } });
}

/** Saves the connection's settings (a connector's settings body, as validated), replacing what was stored. */
export async function saveConnectionSettings(db: Db | Tx, id: string, settings: unknown): Promise<void> {
  await db.connection.update({ where: { id }, data: { settings: settings as Prisma.InputJsonValue } });
}

/** The account's connections to any of `providers`, or of one kind: which provider and in what state. */
export const connectionStates = (db: Db | Tx, accountId: string, of: { providers: string[] } | { kind: string }) =>
  db.connection.findMany({ where: { accountId, ...("kind" in of ? { kind: of.kind } : { provider: { in: of.providers } }) }, select: { provider: true, status: true } });
