import { pollNowAction, type SocialConnector } from "../kind.ts";
import { redditManifest } from "./manifest.ts";
import { pollReddit } from "./poll.ts";

export const reddit: SocialConnector = {
  manifest: redditManifest,
  connectionNote: "Searches each term in each of `options.subreddits` with an app-only token from `client_id`/`client_secret`.",
  extraUrlFields: ["auth_base_url"],
  poll: pollReddit,
  actions: [
    pollNowAction({ displayName: redditManifest.displayName, operationId: "pollReddit", description: "Queues a poll of every term; its signals are stored like scheduled ones." }),
  ],
};
