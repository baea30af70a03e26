export * from "./kind.ts";
export { googleAds } from "./google-ads/index.ts";
export { metaAds } from "./meta/index.ts";
export { tiktokAds } from "./tiktok/index.ts";
export { linkedinAds } from "./linkedin/index.ts";
export { microsoftAds } from "./microsoft/index.ts";
export { snapAds } from "./snap/index.ts";
export { pinterestAds } from "./pinterest/index.ts";
