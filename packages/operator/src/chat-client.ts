import { baseUrlOf } from "@trendgate/connector-core";
import type { ChatClient, ChatConnector } from "@trendgate/connector-chat";

/** Where a chat client's access token comes from (the connections service: refreshed as needed). */
export interface AccessTokens {
  accessToken(connectionId: string): Promise<string>;
}

/** A chat provider's client on one of the account's connections: how the gateway and the workers reach a chat provider. */
export async function chatClientOf(
  tokens: AccessTokens, providerEnv: Record<string, string | undefined>, connector: ChatConnector,
  conn: { id: string; externalAccount: unknown },
): Promise<ChatClient> {
  const accessToken = await tokens.accessToken(conn.id);
  return connector.client({
    baseUrl: baseUrlOf(connector.manifest, providerEnv), accessToken, env: providerEnv,
    account: (conn.externalAccount ?? {}) as Record<string, unknown>,
  });
}
