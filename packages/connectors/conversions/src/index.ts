export * from "./kind.ts";
export { redditAds } from "./reddit-ads/index.ts";
