import type { TokenSet } from "@trendgate/connector-core";
import type { SecretBox } from "@trendgate/crypto";

// What `credentials_sealed` holds: the tokens only (expiry, scopes and the external account are plain columns).
interface Stored {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
}

export const sealTokens = (box: SecretBox, t: TokenSet): string =>
  box.seal(JSON.stringify({ access_token: t.accessToken, refresh_token: t.refreshToken, token_type: t.tokenType } satisfies Stored));

export function openTokens(box: SecretBox, sealed: string): { accessToken: string; refreshToken?: string; tokenType?: string } {
  const s = JSON.parse(box.open(sealed)) as Stored;
  return { accessToken: s.access_token, refreshToken: s.refresh_token, tokenType: s.token_type };
}
