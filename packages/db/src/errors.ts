// Errors that mean "the database cannot be reached right now", as opposed to a bad query.
const UNAVAILABLE_CODES = new Set([
  "P1001", "P1002", "P1008", "P1017", "P2024", // Prisma: unreachable, timed out, closed, pool timeout
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "57P01", "57P03", "53300",
]);

export function isDbUnavailable(err: unknown): boolean {
  // Prisma 7 puts the adapter's error under meta.driverAdapterError (a query that failed as a whole, e.g. P2039).
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause ?? e.meta?.driverAdapterError, depth++) {
    // The driver adapter carries the server's SQLSTATE as originalCode (57P03 while Postgres starts up).
    if ([e.code, e.errorCode, e.originalCode].some((c) => UNAVAILABLE_CODES.has(c))) return true;
    if (e.name === "DriverAdapterError" && /connect|terminat|timeout/i.test(String(e.message) + JSON.stringify(e.cause ?? ""))) return true;
    if (/Can't reach database server|Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(String(e.message))) return true;
  }
  return false;
}

/**
 * Postgres data exceptions (SQLSTATE class 22: a value out of range, text it cannot store) raised by a value from
 * outside. Request schemas should refuse these first; this is the net under them, so they answer 422, never 500.
 */
export function isDbDataError(err: unknown): boolean {
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    const code = String(e.code ?? e.originalCode ?? e.meta?.code ?? "");
    if (/^22[0-9A-Z]{3}$/.test(code)) return true;
    if (e.name === "DriverAdapterError" && /^22/.test(String(e.cause?.originalCode ?? e.cause?.code ?? ""))) return true;
  }
  return false;
}

/** The code of a Prisma error or the Postgres SQLSTATE under a driver-adapter error, looked for down the cause chain. */
function hasCode(err: unknown, codes: Set<string>): boolean {
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if ([e.code, e.originalCode, e.meta?.code, e.cause?.originalCode].some((c) => codes.has(String(c)))) return true;
  }
  return false;
}

/**
 * The row a write addressed was gone when it ran (Prisma P2025): a concurrent request deleted it between the
 * request's own read and its write. For the caller it is as if it had come a moment later: not found.
 */
export const isDbRecordGone = (err: unknown) => hasCode(err, new Set(["P2025"]));

/**
 * A row a write referred to was gone when it ran (a foreign-key violation: Prisma P2003, Postgres 23503): a concurrent
 * request deleted the parent (a subscription, a connection) between the request's own read and its insert. For the
 * caller, as isDbRecordGone: not found.
 */
export const isDbReferenceGone = (err: unknown) => hasCode(err, new Set(["P2003", "23503"]));

/**
 * A concurrent request won a race this one also ran: a unique row created at the same instant (P2002, 23505), or
 * a deadlock / serialization failure between them (40P01, 40001). Nothing of this request was committed.
 */
export const isDbConcurrentConflict = (err: unknown) => hasCode(err, new Set(["P2002", "P2034", "23505", "40P01", "40001"]));
