// Errors that mean "the database cannot be reached right now", as opposed to a bad query.
const UNAVAILABLE_CODES = new Set([
  "P1001", "P1002", "P1008", "P1017", "P2024", // Prisma: unreachable, timed out, closed, pool timeout
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "57P01", "57P03", "53300",
]);

export function isDbUnavailable(err: unknown): boolean {
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (UNAVAILABLE_CODES.has(e.code) || UNAVAILABLE_CODES.has(e.errorCode)) return true;
    if (e.name === "DriverAdapterError" && /connect|terminat|timeout/i.test(String(e.message) + JSON.stringify(e.cause ?? ""))) return true;
    if (/Can't reach database server|Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(String(e.message))) return true;
  }
  return false;
}
