import { pollNowAction, type SocialConnector } from "../kind.ts";
import { youtubeManifest } from "./manifest.ts";
import { pollYouTube } from "./poll.ts";
import { youtubeQuotaProject } from "./quota.ts";

export const youtube: SocialConnector = {
  manifest: youtubeManifest,
  connectionNote: "Follows videos published in the last `published_within_days` days; counts are engagement deltas between polls. " +
    "Connections on one Google Cloud project (`options.project`, or else the same API key) share its daily quota: see `quota_project`.",
  quotaProject: youtubeQuotaProject,
  poll: pollYouTube,
  actions: [
    pollNowAction({
      displayName: youtubeManifest.displayName, operationId: "pollYouTube",
      description: "Queues a poll of every term (one search.list call per term, one videos.list call per 50 videos, counted against the daily quota).",
    }),
  ],
};
