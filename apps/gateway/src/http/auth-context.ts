// Who a request authenticated as. Its own file because the authenticator, the rate limits and the route types all
// need it, and the gateway's dependencies hold the first two.
export interface AuthContext {
  accountId: string;
  keyId: string;
  plan: string;
}
