export * from "./kind.ts";
export { googleAds } from "./google-ads/index.ts";
export { metaAds } from "./meta/index.ts";
