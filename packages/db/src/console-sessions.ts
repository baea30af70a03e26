import crypto from "node:crypto";
import type { Db, Tx } from "./client.ts";
import { hashKey } from "./api-keys.ts";
import { newId, type IdPage } from "./ids.ts";

// Console sessions: a one-time link token (tgcl_…) opens a session once and is exchanged for an access token
// (tgcs_…) that the console sends as a bearer credential. Both carry the session's id, so a lookup is by primary
// key, and 256 random bits, so sha256 is the right hash (as for API keys).

const ID_CHARS = "[0-9a-z]{26}";
const LINK_RE = new RegExp(`^tgcl_(${ID_CHARS})_[A-Za-z0-9_-]{43}$`);
const ACCESS_RE = new RegExp(`^tgcs_(${ID_CHARS})_[A-Za-z0-9_-]{43}$`);

const secret = () => crypto.randomBytes(32).toString("base64url");
const idPart = (id: string) => id.slice("cs_".length);

/** The session id a console access token names, or null when the value is not one. */
export function parseConsoleToken(token: string): { sessionId: string } | null {
  const m = ACCESS_RE.exec(token);
  return m ? { sessionId: `cs_${m[1]}` } : null;
}

export const isConsoleToken = (token: string) => token.startsWith("tgcs_");

export type ConsoleSessionRow = Awaited<ReturnType<Db["consoleSession"]["findUniqueOrThrow"]>>;

export async function createConsoleSession(db: Db | Tx, input: {
  accountId: string; createdByKeyId: string | null; label: string | null; linkSeconds: number; sessionSeconds: number;
}) {
  const id = newId("cs");
  const link = `tgcl_${idPart(id)}_${secret()}`;
  const row = await db.consoleSession.create({
    data: {
      id, accountId: input.accountId, createdByKeyId: input.createdByKeyId, label: input.label, linkHash: hashKey(link),
      linkExpiresAt: new Date(Date.now() + input.linkSeconds * 1000), sessionSeconds: input.sessionSeconds,
    },
  });
  return { row, link };
}

/**
 * Opens the session a link token names, once: the first exchange of an unexpired, unrevoked link sets its access
 * token; any later one (or a concurrent second one) gets null, as does an unknown, expired or revoked link.
 */
export async function openConsoleSession(db: Db, link: string, now = new Date()) {
  const m = LINK_RE.exec(link);
  if (!m) return null;
  const access = `tgcs_${m[1]}_${secret()}`;
  const rows = await db.$queryRaw<{ id: string }[]>`
    UPDATE console_sessions SET opened_at = ${now}, token_hash = ${hashKey(access)},
      expires_at = ${now}::timestamp + make_interval(secs => session_seconds)
    WHERE id = ${`cs_${m[1]}`} AND link_hash = ${hashKey(link)} AND opened_at IS NULL AND revoked_at IS NULL AND link_expires_at > ${now}
    RETURNING id`;
  if (!rows.length) return null;
  const row = await db.consoleSession.findUniqueOrThrow({ where: { id: rows[0].id }, include: { account: true } });
  return { row, access };
}

/** The session a presented access token belongs to (with its account), or null. Compares hashes in constant time. */
export async function findConsoleSessionByToken(db: Db, token: string) {
  const parsed = parseConsoleToken(token);
  if (!parsed) return null;
  const row = await db.consoleSession.findUnique({ where: { id: parsed.sessionId }, include: { account: true } });
  if (!row?.tokenHash) return null;
  const a = Buffer.from(row.tokenHash, "hex"), b = Buffer.from(hashKey(token), "hex");
  return a.length === b.length && crypto.timingSafeEqual(a, b) ? row : null;
}

export const findConsoleSession = (db: Db, id: string) => db.consoleSession.findUnique({ where: { id }, include: { account: true } });

export const findAccountConsoleSession = (db: Db, accountId: string, id: string) => db.consoleSession.findFirst({ where: { id, accountId } });

/** Sessions of an account that can still be opened or used, newest first. */
export function listLiveConsoleSessions(db: Db, accountId: string, page: IdPage, now = new Date()) {
  return db.consoleSession.findMany({
    where: {
      accountId, ...page.after, revokedAt: null,
      OR: [{ openedAt: null, linkExpiresAt: { gt: now } }, { expiresAt: { gt: now } }],
    },
    orderBy: { id: "desc" }, take: page.take,
  });
}

export async function revokeConsoleSession(db: Db, accountId: string, id: string, now = new Date()) {
  const { count } = await db.consoleSession.updateMany({ where: { id, accountId, revokedAt: null }, data: { revokedAt: now } });
  return count > 0;
}

/**
 * Revokes the sessions an API key created that can still be opened or used (expired ones keep their status), and
 * returns their ids for the auth cache invalidation.
 */
export async function revokeKeyConsoleSessions(db: Db, accountId: string, keyId: string, now = new Date()): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    UPDATE console_sessions SET revoked_at = ${now}
    WHERE account_id = ${accountId} AND created_by_key_id = ${keyId} AND revoked_at IS NULL
      AND ((opened_at IS NULL AND link_expires_at > ${now}) OR expires_at > ${now})
    RETURNING id`;
  return rows.map((r) => r.id);
}

export async function getConsoleFrameAncestors(db: Db, accountId: string): Promise<string[]> {
  const row = await db.account.findUnique({ where: { id: accountId }, select: { consoleFrameAncestors: true } });
  return row?.consoleFrameAncestors ?? [];
}

export async function setConsoleFrameAncestors(db: Db, accountId: string, origins: string[]) {
  await db.account.update({ where: { id: accountId }, data: { consoleFrameAncestors: origins } });
}
