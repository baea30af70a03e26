import type { ProviderEnv, ProviderError, ProviderManifest } from "@trendgate/connector-core";

// The ads connector kind: turn trends into targeting on an ad account's campaign entities, as a plan of
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
 * Google, `<base>/v27.0/` for Meta; an executor plan gives the absolute URL), the changes it carries.
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

/** An ad account the connection's token reaches; `name` where the provider's listing gives one. */
export interface AdAccount { id: string; name: string | null }

export interface AdsClient {
  /**
   * The ad accounts the token reaches (the provider's own listing of them), so a selection without an ad account
   * can use the only one there is, and say which to choose from when there are several.
   */
  listAccounts(): Promise<AdAccount[]>;
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
  /**
   * Where resolveItems looks each field's items up, as a plan with nothing found says it (e.g. "Meta's interest
   * search"); a field left out is the trend's own phrase (keywords), named generically.
   */
  itemLookup?: Partial<Record<TargetingField, string>>;
  /** Its reporting: the catalog, report previews and CSV exports read through it. */
  reporting?: AdsReporting;
}

// ---- Reporting -------------------------------------------------------------------------------------
// One catalog across providers: a provider's reporting client reads its own report endpoint (sync pages, or an
// async job it submits, polls and downloads) and yields rows already normalised: dates in the ad account's time
// zone, money as integer micros of the account's currency, clicks and conversions as the provider defines them
// (said in its capabilities). Ratios (ctr, cpc) are computed by us, never taken from a provider.

/** The entity levels a report can break down to; `ad_group` is the level plans target (ad group, ad set, ad squad,
 * LinkedIn campaign). */
export const REPORT_LEVELS = ["campaign", "ad_group", "ad"] as const;
export type ReportLevel = (typeof REPORT_LEVELS)[number];
export const REPORT_GRANULARITIES = ["day", "total"] as const;
export type ReportGranularity = (typeof REPORT_GRANULARITIES)[number];

export interface ReportQuery {
  accountId: string;
  level: ReportLevel;
  /** Inclusive dates (YYYY-MM-DD) in the ad account's time zone. */
  from: string;
  to: string;
  granularity: ReportGranularity;
  /** Only rows of these ad groups (e.g. the entities a plan changed); undefined: all. */
  adGroupIds?: string[];
}

/** One row, normalised. Ids the level does not reach are null (an ad_group row has no ad_id). */
export interface ReportRow {
  /** YYYY-MM-DD in the account's time zone; null with granularity total. */
  date: string | null;
  campaign_id: string;
  campaign_name: string | null;
  ad_group_id: string | null;
  ad_group_name: string | null;
  ad_id: string | null;
  ad_name: string | null;
  impressions: number;
  clicks: number;
  /** Integer micros of the account's currency, as a decimal string (int64 does not fit a JSON number). */
  spend_micros: string;
  /** As the provider defines them (capabilities.conversions); null where it reports none. */
  conversions: number | null;
}

export interface ReportingCapabilities {
  levels: ReportLevel[];
  granularities: ReportGranularity[];
  /** How far back the provider reports, in days. */
  maxLookbackDays: number;
  /** The longest range one report may cover, in days. */
  maxRangeDays: number;
  /** What the provider counts as a click, and as a conversion (shown in the catalog). */
  clicks: string;
  conversions: string;
  /** Reports run as provider-side jobs (submit, poll, download) rather than synchronous pages. */
  asyncJobs: boolean;
}

export interface ReportingClient {
  /** The ad account's currency (ISO 4217) and time zone (IANA). */
  account(accountId: string): Promise<{ currency: string; time_zone: string }>;
  /**
   * The report's rows page by page, as the provider pages them (an async provider submits its job, polls and
   * downloads first). The caller pulls: a page is fetched only when the previous one was taken (backpressure), and
   * an aborted signal stops the work (an async job is abandoned, not waited for).
   */
  pages(q: ReportQuery, opts: { signal?: AbortSignal }): AsyncIterable<ReportRow[]>;
}

export interface AdsReporting {
  capabilities: ReportingCapabilities;
  client(ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }): ReportingClient;
}

/**
 * What an ads API's calls need beyond the configured connector limits: a synchronous report page (a day of ad-level
 * rows) runs to tens of MiB, so ads providers read up to 32 MiB per answer.
 */
export const ADS_RESPONSE_LIMITS = Object.freeze({ maxResponseBytes: 32 * 1024 * 1024 });
