import { BlockedDestinationError, type OutboundGuard } from "@trendgate/delivery";
import { ApiError } from "./api-error.ts";

/**
 * The gateway's half of the one outbound-URL rule: the contract (OutboundUrl) has already normalised the URL and
 * refused bad schemes, ports and credentials; here the guard refuses hosts that are literal non-public addresses.
 * Host names are checked again on every connection (DNS rebinding). The message speaks to an API user, who cannot
 * change the operator's allowlist.
 */
export function assertPublicDestination(guard: OutboundGuard, url: string | null | undefined, field: string) {
  if (!url) return;
  try {
    guard.checkUrl(new URL(url));
  } catch (e) {
    if (!(e instanceof BlockedDestinationError)) throw e;
    const message = `${new URL(url).hostname} is not a public address (${e.range}); Trendgate only calls public internet addresses`;
    throw new ApiError("validation_failed", message, { errors: [{ location: "body", path: field, message, code: "blocked_destination" }] });
  }
}
