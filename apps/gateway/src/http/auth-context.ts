// Who a request authenticated as. Its own file because the authenticator, the rate limits and the route types all
// need it, and the gateway's dependencies hold the first two.
export interface AuthContext {
  accountId: string;
  /** The API key, or the web console session (which acts for the account, but cannot manage keys or sessions). */
  credential: { kind: "apiKey" | "consoleSession"; id: string };
  plan: string;
}
