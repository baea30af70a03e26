import { ProviderError } from "@trendgate/connector-social";

/** Runs a call that must fail with a ProviderError and returns it (anything else fails the test). */
export async function providerError(fn: () => Promise<unknown>): Promise<ProviderError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ProviderError) return e;
    throw e;
  }
  throw new Error("expected a ProviderError");
}
