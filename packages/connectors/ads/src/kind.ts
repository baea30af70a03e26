import type { ProviderEnv, ProviderError, ProviderManifest } from "@trendgate/connector-core";

// The ads connector kind (issue 11): turn trends into targeting on an ad account's campaign entities, as a plan of
// exact provider calls that is previewed (dry-run where the provider has one), applied as planned, and rolled back.
// A provider (packages/connectors/ads/src/<provider>/) implements AdsConnector; the plan engine (@trendgate/ads)
// decides what changes, the provider only says how its API reads and writes them:
// - per-item writers (Google Ads: each keyword its own ad-group criterion) add and remove items one by one;
// - whole-spec writers (Meta: an ad set's `targeting` is replaced by each write) merge the change into the spec
//   read at preview (read-merge-write), so only the plan's change is written.
// Calls carry no credentials: the same calls are what an executor plan hands to a caller with its own vault.

/** Targeting a plan can change. */
export const TARGETING_FIELDS = ["keywords", "interests"] as const;
export type TargetingField = (typeof TARGETING_FIELDS)[number];

export interface AdsCapabilities {
  /**
   * The provider checks a write without making it (Google `validateOnly`, Meta `validate_only`). Without one, the
   * connector's own checks stand in (`run` with dryRun), and strict_safety asks the caller to acknowledge the plan.
   */
  dryRun: boolean;
  /** The provider sizes an audience for a targeting spec (Meta delivery_estimate, LinkedIn audienceCounts). */
  audienceEstimate: boolean;
  /** The provider offers test accounts or a sandbox base URL. */
  sandbox: boolean;
  targeting: TargetingField[];
  writes: "per_item" | "whole_spec";
}

/** A campaign entity the user maps a trend category to. */
export interface AdsEntity {
  id: string;
  name: string;
  level: "campaign" | "ad_group" | "ad_set";
  parent_id: string | null;
  status: string;
  /** The targeting fields a plan may change on it. */
  targeting: TargetingField[];
}

/** One targeting item; `key` is its identity within a field (keyword text and match type, interest id). */
export interface TargetingItem { key: string; text: string; id?: string; match_type?: string; resource?: string }

/** An entity's current targeting in one field; `spec` is the provider's whole spec where writes replace it. */
export interface EntityTargeting { entity_id: string; field: TargetingField; items: TargetingItem[]; spec?: unknown }

export interface TargetingChange { id: string; entity_id: string; field: TargetingField; op: "add" | "remove"; item: TargetingItem; trend_id: string | null }

/**
 * One provider call, without credentials: `path` below the provider's versioned API base (e.g. `<base>/v25/` for
 * Google, `<base>/v25.0/` for Meta; an executor plan gives the absolute URL), the changes it carries.
 */
export interface ProviderCall {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  change_ids: string[];
}

/** How one change fared in a call; `request_id` is the provider's (for its support), `resource` what was made. */
export interface ChangeResult {
  change_id: string; ok: boolean; error?: ProviderError; request_id?: string; resource?: string;
  /** What a dry run learned besides yes or no (LinkedIn: the audience size the change leaves). */
  note?: string;
}

export interface Page<T> { data: T[]; next_cursor: string | null }

/** A call as the HTTP request a caller's own runtime makes (executor plans): absolute URL, no credentials. */
export interface ExecutorRequest {
  method: ProviderCall["method"];
  url: string;
  headers: Record<string, string>;
  /** JSON body, or form fields where the provider takes a form (content-type says which). */
  body?: unknown;
  /** Where the caller puts its own token, e.g. `Authorization: Bearer <access token>`. */
  credentials: string;
}

export interface AdsClient {
  listEntities(accountId: string, opts: { cursor?: string; limit: number }): Promise<Page<AdsEntity>>;
  readTargeting(accountId: string, entityIds: string[], field: TargetingField): Promise<EntityTargeting[]>;
  /** Targeting items for trend phrases (keywords as given; interests through the provider's lookup). */
  resolveItems(accountId: string, field: TargetingField, phrases: string[]): Promise<Map<string, TargetingItem[]>>;
  /** The exact calls that make `changes` on entities whose targeting is `prior` (read at preview). */
  calls(accountId: string, changes: TargetingChange[], prior: EntityTargeting[]): ProviderCall[];
  /**
   * Makes the calls; one result per change. With dryRun nothing is written: the provider's validate-only variant
   * where it has one (capabilities.dryRun), else the connector's own checks of the calls against the provider's
   * documented constraints (and its audience count or sandbox where that helps), each refusal with its reason.
   */
  run(accountId: string, calls: ProviderCall[], opts: { dryRun: boolean }): Promise<ChangeResult[]>;
  /**
   * The call as a request for an executor plan (dryRun: its validate-only variant, where the provider has one).
   * Providers without it cannot issue executor plans.
   */
  executorRequest?(call: ProviderCall, opts: { dryRun: boolean }): ExecutorRequest;
}

export interface AdsConnector {
  manifest: ProviderManifest<"ads">;
  capabilities: AdsCapabilities;
  client(ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }): AdsClient;
}
