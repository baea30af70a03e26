import { monotonicFactory } from "ulid";

const ulid = monotonicFactory();

/** `<prefix>_<ulid>`: readable type tag, time-ordered so "newest first" pagination is an id comparison. */
export const newId = (prefix: string) => `${prefix}_${ulid().toLowerCase()}`;
