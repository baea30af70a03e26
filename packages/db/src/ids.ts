import crypto from "node:crypto";
import { decodeTime, encodeTime, monotonicFactory } from "ulid";

// Cryptographic random bytes drawn from the kernel 4 KiB at a time: ulid's default source asks for each of an id's
// 16 random characters separately (a few % of a delivery worker's CPU). A byte / 256 maps evenly onto its 32 symbols.
const pool = Buffer.alloc(4096);
let at = pool.length;
const prng = () => {
  if (at === pool.length) { crypto.randomFillSync(pool); at = 0; }
  return pool[at++] / 256;
};

const ulid = monotonicFactory(prng);

/** `<prefix>_<ulid>`: readable type tag, time-ordered so "newest first" pagination is an id comparison. */
export const newId = (prefix: string) => `${prefix}_${ulid().toLowerCase()}`;

/** The smallest id `prefix` could have been given at `at` (ids are time-ordered): a lower bound for a range of ids. */
export const idFloorAt = (prefix: string, at: Date) => `${prefix}_${encodeTime(at.getTime(), 10).toLowerCase()}0000000000000000`;

/**
 * When newId made `id` (to the millisecond); `fallback` for an id it did not make. A row keyed by an id made before its
 * first write takes its partition time from here, so writing it again (an unconfirmed commit) hits the same key.
 */
export function timeOfId(id: string, fallback = new Date()): Date {
  const u = id.slice(id.lastIndexOf("_") + 1);
  if (u.length !== 26) return fallback;
  try { return new Date(decodeTime(u.toUpperCase())); } catch { return fallback; }
}

/** One page of a keyset listing, newest first: ids are time-ordered, so "after the cursor" is `id < cursor`. */
export interface IdPage {
  after: { id?: { lt: string } };
  take: number;
}
