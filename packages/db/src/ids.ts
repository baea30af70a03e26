import crypto from "node:crypto";
import { monotonicFactory } from "ulid";

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

/** One page of a keyset listing, newest first: ids are time-ordered, so "after the cursor" is `id < cursor`. */
export interface IdPage {
  after: { id?: { lt: string } };
  take: number;
}
