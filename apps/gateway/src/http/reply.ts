// What a route handler answers. Its own file because the idempotency store records replies, and the gateway's
// dependencies (which the route types need) hold that store.
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}
