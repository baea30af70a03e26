import type { RunAction } from "../kind.ts";
import { ProviderError } from "../types.ts";
import { XClient } from "./client.ts";
import { PROVIDER } from "./http.ts";
import { XReplyBody } from "./schemas.ts";
import { canRefresh, userToken } from "./user-token.ts";

/** Response routing: a reply is drafted, a person approves it, then the worker posts it with the user-context token. */
export const replyAction: RunAction<{ in_reply_to_id: string; text: string }> = {
  kind: "run",
  name: "reply",
  operationId: "replyOnX",
  summary: "Route a response on X: draft a reply, then approve or reject it",
  description: "`{in_reply_to_id, text}` drafts a reply: it is stored awaiting approval (201) and nothing is posted. " +
    "`{draft_id, decision: \"approve\"}` queues it (202): a worker posts it with the connection's `user_token` (never the gateway); " +
    "`{draft_id, decision: \"reject\"}` discards it (200). Drafts and outcomes (the new post's id, or the error) appear in the status' `actions`. " +
    "A rate-limited reply is retried after the limit resets.",
  body: XReplyBody,
  approval: true,
  precheck: (creds) => creds.user_token || canRefresh(creds) ? null : {
    detail: "Replies need a user-context token: PUT the connection with credentials.user_token (and user_refresh_token with client_id to keep replying after two hours)",
    message: "the X connection has no credentials.user_token",
    code: "missing_user_token",
  },
  async run(ctx, conn, input) {
    const x = new XClient(ctx);
    const post = async (token: string) => ({ post_id: (await x.reply({ inReplyToId: input.in_reply_to_id, text: input.text }, token)).id });
    try {
      return await post(await userToken(ctx, conn));
    } catch (e) {
      // Refused before its stated expiry (revoked, or issued without one): once more with a new token, if we can get one.
      if (!(e instanceof ProviderError) || e.kind !== "unauthorized" || e.detail.status !== 401 || !canRefresh(conn.credentials)) throw e;
      return post(await userToken(ctx, conn, { refused: true }));
    }
  },
};
