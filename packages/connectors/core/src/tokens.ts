/** What a code exchange or a refresh yields, whatever the provider's response looked like. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** Absolute expiry of the access token; absent when it does not expire. */
  expiresAt?: Date;
  scopes?: string[];
  tokenType?: string;
  /** Non-secret facts about the connected account, stored in plain (Slack: team id and name, bot user id). */
  account?: Record<string, string | null>;
}
