import { pinnedVersion, type ProviderEnv } from "@trendgate/connector-core";
import { env as ENV, manifest } from "./manifest.ts";

// What every Google Ads API call shares, for the targeting client and the reporting client alike: the pinned API
// version in the base URL (Google sunsets versions on a schedule) and the manager account a call acts through.

/** Customer ids are written with or without dashes (123-456-7890); the API takes digits. */
export const digits = (id: string) => id.replace(/-/g, "");

export function googleApi(ctx: { baseUrl: string; env?: ProviderEnv }): { base: string; loginCustomerId?: string } {
  const base = `${ctx.baseUrl.replace(/\/+$/, "")}/${pinnedVersion(manifest, ctx.env)}/`;
  const login = ctx.env?.[ENV.loginCustomerId];
  if (!login) return { base };
  if (!/^\d{10}$/.test(digits(login))) throw new Error(`${ENV.loginCustomerId} must be a 10-digit customer id, not ${JSON.stringify(login)}`);
  return { base, loginCustomerId: digits(login) };
}
