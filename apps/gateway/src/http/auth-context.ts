// Who a request authenticated as. Its own file because the authenticator, the rate limits and the route types all
// need it, and the gateway's dependencies hold the first two.
export interface AuthContext {
  accountId: string;
  /** The API key, or the web console session (which acts for the account, but cannot manage keys or sessions). */
  credential: {
    kind: "apiKey" | "consoleSession"; id: string;
    /** A console session's label (who the console was opened for, e.g. an email), for the history of what it did. */
    label?: string;
  };
  plan: string;
}
