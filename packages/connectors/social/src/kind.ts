import { z } from "zod";
import { Id } from "@trendgate/contracts";
import type { ProviderEnv, ProviderError, ProviderManifest } from "@trendgate/connector-core";
import type { Observation, ProviderContext } from "./types.ts";

// The social/search connector kind. A provider (packages/connectors/social/src/<provider>/) is one SocialConnector:
// its manifest, how it polls (if it is polled) and its actions. The gateway generates every route under
// /api/integrations/social/{provider}/ from these (apps/gateway/src/routes/connectors/social.ts) and the worker runs
// them (apps/worker/src/processors/social-poll.ts); neither names a provider.
//
// A provider's connection body (manifest.schemas.connection) must be an object
// `{credentials: {...}, terms: string[], options: {...}, base_url?: string | null, ...extraUrlFields}`: the gateway
// seals `credentials`, stores the rest, and hands it back to poll/run as a SocialConnectionState.

/** What poll and run are given: where the provider lives, the guarded HTTP client, the environment, the clock. */
export interface SocialContext extends ProviderContext {
  /** The whole environment, for variables a provider names itself (e.g. Reddit's token host). */
  env: ProviderEnv;
  now: Date;
  /**
   * Stores the connection's credentials anew, sealed, after the provider rotated them (X's refresh tokens work once).
   * False when a PUT replaced them meanwhile: those win. Jobs of one connection run one at a time, so none races it.
   */
  saveCredentials(credentials: Record<string, string>): Promise<boolean>;
}

/** One connection as its provider sees it. */
export interface SocialConnectionState {
  id: string;
  terms: string[];
  /** The connection body's `options` (plus any extraUrlFields that were set), as validated by the manifest's schema. */
  options: Record<string, any>;
  /** The connection body's `credentials`, opened. */
  credentials: Record<string, string>;
  /** The provider's own cursor, as its last poll returned it (kept in `cursor.terms` of the row). */
  cursor: Record<string, any>;
  /** Where the last poll stopped in its list of searches (a limit part way): this poll starts there (pacing.ts). */
  resumeAt?: number;
  /** Quota as last recorded, in the provider's own shape (shown in the status' `quota`). */
  quota: Record<string, any>;
  /** For a provider with quotaProject: the state its quota project's connections share, as the last poll of any left it. */
  sharedQuota?: Record<string, any>;
}

/** What a poll found. Observations become signals (source = provider id, id = externalId). */
export interface PollOutcome {
  observations: Observation[];
  cursor: Record<string, unknown>;
  quota: Record<string, unknown>;
  /** Why the poll stopped; what was observed before it is stored all the same. */
  error?: ProviderError;
  /** The provider's window is spent: not polled again before this. */
  notBefore?: Date;
  /** Part of the poll could not run (one subreddit of several refused): shown as the connection's last_error, status kept. */
  warning?: string;
  /** The search the poll stopped before (rate limit, or the window too low to pay for it): the next poll starts there. */
  resumeAt?: number;
  /** The quota project's shared state after this poll (providers with quotaProject). */
  sharedQuota?: Record<string, unknown>;
}

interface ActionBase {
  /** The action's name, recorded on the connection, and its path segment: POST …/{provider}/{name}. */
  name: string;
  operationId: string;
  summary: string;
  description: string;
}

/** "Poll now, outside the schedule": queues the same poll a scheduled tick does (the connector must have `poll`). */
export interface PollNowAction extends ActionBase {
  kind: "poll";
}

/** An action the worker runs with `run`; the request body is its input, recorded on the connection. */
export interface RunAction<I = any> extends ActionBase {
  kind: "run";
  body: z.ZodType;
  /**
   * Draft, then a person decides: `body` is a union of the draft's input and a draftDecision() schema. A draft is
   * stored awaiting approval (201); `{draft_id, decision}` queues it (202) or rejects it (200).
   */
  approval?: boolean;
  /** Refuses the request (422) before anything is stored when the connection's credentials cannot do this action. */
  precheck?(credentials: Record<string, string>): { detail: string; message: string; code: string } | null;
  /** Runs in the worker; resolves to the result recorded on the action, or throws a ProviderError. */
  run(ctx: SocialContext, connection: SocialConnectionState, input: I): Promise<Record<string, unknown>>;
}

export type SocialActionDef = PollNowAction | RunAction;

export interface SocialConnector {
  manifest: ProviderManifest<"social">;
  /** Appended to the connection route's description: what the credentials and options are for. */
  connectionNote: string;
  /** Top-level URL fields of the connection body besides base_url: checked as outbound destinations, stored in options. */
  extraUrlFields?: string[];
  /**
   * When the provider counts quota per something several connections can share (YouTube: per Google Cloud project),
   * what this connection draws on. Connections with the same value are polled one at a time across the fleet and
   * share `sharedQuota` (stored in Postgres); shown as the connection's `quota_project`.
   */
  quotaProject?(credentials: Record<string, string>, options: Record<string, any>): string;
  /** Polled on the schedule (SOCIAL_POLL_INTERVAL_SECONDS); absent for providers that only run actions. */
  poll?(ctx: SocialContext, connection: SocialConnectionState): Promise<PollOutcome>;
  actions: SocialActionDef[];
}

export const isPolled = (c: SocialConnector) => typeof c.poll === "function";

/** The decision half of an approval action's body. */
export const draftDecision = (id: string) =>
  z.object({ draft_id: Id, decision: z.enum(["approve", "reject"]) })
    .strict()
    .meta({ id, description: "Approve (queue for posting) or reject a draft" });

export const pollNowAction = (p: { displayName: string; operationId: string; description: string }): PollNowAction => ({
  kind: "poll", name: "poll", operationId: p.operationId,
  summary: `Poll ${p.displayName} now, outside the schedule`,
  description: `${p.description} Refused (409) while the connection needs new credentials.`,
});
