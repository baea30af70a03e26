import type { ProviderEnv } from "@trendgate/connector-core";
import { env as ENV } from "./manifest.ts";

// What every Google Ads API call shares, for the targeting client and the reporting client alike: the pinned API
// version in the base URL (Google sunsets versions on a schedule) and the manager account a call acts through.

export const DEFAULT_VERSION = "v25";

/** Customer ids are written with or without dashes (123-456-7890); the API takes digits. */
export const digits = (id: string) => id.replace(/-/g, "");

export function googleApi(ctx: { baseUrl: string; env?: ProviderEnv }): { base: string; loginCustomerId?: string } {
  const version = ctx.env?.[ENV.apiVersion] || DEFAULT_VERSION;
  if (!/^v\d+$/.test(version)) throw new Error(`${ENV.apiVersion} must look like v25, not ${JSON.stringify(version)}`);
  const base = `${ctx.baseUrl.replace(/\/+$/, "")}/${version}/`;
  const login = ctx.env?.[ENV.loginCustomerId];
  if (!login) return { base };
  if (!/^\d{10}$/.test(digits(login))) throw new Error(`${ENV.loginCustomerId} must be a 10-digit customer id, not ${JSON.stringify(login)}`);
  return { base, loginCustomerId: digits(login) };
}
