// Why a connection request cannot start; the gateway turns each into its problem answer.
export type ConnectionsErrorCode = "unknown_provider" | "not_oauth" | "provider_not_configured" | "return_url_not_allowed";

export class ConnectionsError extends Error {
  constructor(readonly code: ConnectionsErrorCode, message: string, readonly missing: string[] = []) {
    super(message);
  }
}
