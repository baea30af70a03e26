import type { SocialConnector } from "../kind.ts";
import { xManifest } from "./manifest.ts";
import { pollX } from "./poll.ts";
import { replyAction } from "./reply.ts";

export const x: SocialConnector = {
  manifest: xManifest,
  connectionNote: "Recent search needs `bearer_token`; replies need `user_token` (OAuth 2.0 user context with tweet.write).",
  poll: pollX,
  actions: [replyAction],
};
