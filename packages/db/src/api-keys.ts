import crypto from "node:crypto";
import type { Db, Tx } from "./client.ts";
import { newId, type IdPage } from "./ids.ts";

// Key format: tg_<prefix>_<secret>. The prefix (12 base32 chars) is stored in clear and indexed for lookup; the
// whole key is stored only as sha256 (keys carry 256 bits of randomness, so a slow hash would add nothing).
const KEY_RE = /^tg_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/;

export const hashKey = (key: string) => crypto.createHash("sha256").update(key).digest("hex");

export function generateKey(): { key: string; prefix: string } {
  const prefix = base32(crypto.randomBytes(8)).slice(0, 12);
  const secret = crypto.randomBytes(32).toString("base64url");
  return { key: `tg_${prefix}_${secret}`, prefix };
}

export function parseKey(key: string): { prefix: string } | null {
  const m = KEY_RE.exec(key);
  return m ? { prefix: m[1] } : null;
}

function base32(buf: Buffer): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let bits = 0, value = 0, out = "";
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) { out += alphabet[(value >>> (bits - 5)) & 31]; bits -= 5; }
  }
  return out;
}

export type ApiKeyRow = Awaited<ReturnType<Db["apiKey"]["findUniqueOrThrow"]>>;

export async function createApiKey(db: Db | Tx, accountId: string, name: string, expiresAt?: Date | null) {
  const { key, prefix } = generateKey();
  const row = await db.apiKey.create({
    data: { id: newId("key"), accountId, name, prefix, secretHash: hashKey(key), expiresAt: expiresAt ?? null },
  });
  return { row, key };
}

/**
 * An account's active keys (not revoked, not expired), counted under a lock on the account's row: concurrent key
 * creations of one account wait for each other, so a cap checked with this count holds.
 */
export async function countActiveKeysLocked(tx: Tx, accountId: string, now = new Date()) {
  await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
  return tx.apiKey.count({ where: { accountId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] } });
}

/** The row for a presented key, or null. Compares hashes in constant time. */
export async function findKeyByValue(db: Db, key: string) {
  const parsed = parseKey(key);
  if (!parsed) return null;
  const row = await db.apiKey.findUnique({ where: { prefix: parsed.prefix }, include: { account: true } });
  if (!row) return null;
  const a = Buffer.from(row.secretHash, "hex"), b = Buffer.from(hashKey(key), "hex");
  return a.length === b.length && crypto.timingSafeEqual(a, b) ? row : null;
}

export const isKeyUsable = (row: Pick<ApiKeyRow, "revokedAt" | "expiresAt">, now = new Date()) =>
  !row.revokedAt && (!row.expiresAt || row.expiresAt > now);

/** Rotation: a new key with the same name; the old one stays valid for the grace period, then expires. Run it in a transaction. */
export async function rotateApiKey(tx: Tx, accountId: string, id: string, graceSeconds: number) {
  const old = await tx.apiKey.findFirst({ where: { id, accountId, revokedAt: null } });
  if (!old || !isKeyUsable(old)) return null;
  const { key, prefix } = generateKey();
  const row = await tx.apiKey.create({
    data: { id: newId("key"), accountId, name: old.name, prefix, secretHash: hashKey(key), expiresAt: old.expiresAt },
  });
  const graceEnd = new Date(Date.now() + graceSeconds * 1000);
  const expiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd;
  const updated = await tx.apiKey.update({
    where: { id: old.id },
    data: graceSeconds === 0 ? { revokedAt: new Date(), rotatedToId: row.id } : { expiresAt, rotatedToId: row.id },
  });
  return { row, key, old: updated };
}

/** A page of the account's keys, newest first (revoked and expired ones included). */
export const listApiKeys = (db: Db, accountId: string, page: IdPage) =>
  db.apiKey.findMany({ where: { accountId, ...page.after }, orderBy: { id: "desc" }, take: page.take });

/** One of the account's keys, in whatever state, or null. */
export const findAccountApiKey = (db: Db | Tx, accountId: string, id: string) => db.apiKey.findFirst({ where: { id, accountId } });

export async function revokeApiKey(db: Db | Tx, id: string, at = new Date()): Promise<void> {
  await db.apiKey.update({ where: { id }, data: { revokedAt: at } });
}
