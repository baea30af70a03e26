import type { ProviderManifest } from "./manifest.ts";

// The one way a provider's code reads its API version: the manifest's pin, overridden by its configuration
// variable when set. A malformed override fails here, naming the variable, instead of as a vendor 4xx per call.

type Env = Readonly<Record<string, string | undefined>>;

export function pinnedVersion(m: Pick<ProviderManifest, "id" | "apiVersion">, env: Env | undefined): string {
  const pin = m.apiVersion;
  if (!pin) throw new Error(`${m.id} declares no API version`);
  const override = pin.env ? env?.[pin.env] : undefined;
  if (!override) return pin.default;
  if (!pin.pattern.test(override)) {
    throw new Error(`${pin.env} must look like ${pin.default} (${pin.pattern.source}), not ${JSON.stringify(override)}`);
  }
  return override;
}

/** A URL with `{apiVersion}` replaced by the pinned version (Meta's OAuth dialog and token endpoint, TikTok's token endpoints name it). */
export const withPinnedVersion = (url: string, m: Pick<ProviderManifest, "id" | "apiVersion">, env: Env | undefined): string =>
  url.includes("{apiVersion}") ? url.replaceAll("{apiVersion}", pinnedVersion(m, env)) : url;
