import { z } from "zod";
import { Id, pageQuery, storableText, text } from "./common.ts";

// Ads reporting: the report request shared by the preview, the streamed export and the export job, and
// the normalised row every provider's rows become. Provider-specific report shapes live in the providers' folders.

export const REPORT_DIMENSIONS = ["date", "provider", "account_id", "campaign", "ad_group", "ad"] as const;
export const REPORT_METRICS = ["impressions", "clicks", "spend_micros", "conversions", "ctr", "cpc_micros"] as const;

const isoDay = z.iso.date().check(storableText).meta({ description: "YYYY-MM-DD, in each ad account's own time zone" });

export const ReportRequest = z.object({
  providers: z.array(text({ min: 1, max: 40 })).min(1).max(7).optional()
    .meta({ description: "Ads provider ids (GET /api/integrations/ads/providers); default: every connected provider with reporting" }),
  from: isoDay,
  to: isoDay,
  granularity: z.enum(["day", "total"]).default("day"),
  level: z.enum(["campaign", "ad_group", "ad"]).default("campaign")
    .meta({ description: "The deepest entity the rows break down to (ad_group = ad group, ad set, ad squad or LinkedIn campaign)" }),
  filters: z.object({
    changed_by_trendgate: z.boolean().optional().meta({ description: "Only ad groups a plan of this service changed (applied runs)" }),
    plan_id: Id.optional().meta({ description: "Only the ad groups this plan changed" }),
  }).optional(),
}).check((ctx) => {
  const { from, to } = ctx.value;
  if (from > to) ctx.issues.push({ code: "custom", message: "must be on or after `from`", path: ["to"], input: to });
}).meta({ id: "ReportRequest" });
export type ReportRequest = z.infer<typeof ReportRequest>;

/** The CSV's columns, in order (the preview's rows have the same fields). */
export const REPORT_COLUMNS = [
  "date", "provider", "account_id", "campaign_id", "campaign_name", "ad_group_id", "ad_group_name", "ad_id", "ad_name",
  "impressions", "clicks", "spend_micros", "currency", "conversions", "ctr", "cpc_micros",
] as const;

export const ReportOutputRow = z.object({
  date: z.string().nullable(), provider: z.string(), account_id: z.string(),
  campaign_id: z.string(), campaign_name: z.string().nullable(), ad_group_id: z.string().nullable(), ad_group_name: z.string().nullable(),
  ad_id: z.string().nullable(), ad_name: z.string().nullable(),
  impressions: z.number(), clicks: z.number(),
  spend_micros: z.string().meta({ description: "Integer micros of `currency` (a decimal string: int64)" }),
  currency: z.string().meta({ description: "ISO 4217, the ad account's" }),
  conversions: z.number().nullable().meta({ description: "As the provider defines them (see the catalog)" }),
  ctr: z.number().nullable().meta({ description: "clicks / impressions, computed by us; null without impressions" }),
  cpc_micros: z.string().nullable().meta({ description: "spend_micros / clicks, rounded down, computed by us; null without clicks" }),
}).meta({ id: "ReportRow" });
export type ReportOutputRow = z.infer<typeof ReportOutputRow>;

export const EXPORT_STATUSES = ["queued", "running", "ready", "failed", "cancelled"] as const;

export const ReportProviderOutcome = z.object({
  provider: z.string(), status: z.enum(["ok", "failed", "not_reached"]), account_id: z.string().nullable(), currency: z.string().nullable(),
  time_zone: z.string().nullable(), rows: z.number(), error: z.object({ kind: z.string(), message: z.string() }).nullable(),
}).meta({ id: "ReportProviderOutcome", description: "Per provider: `failed` with its reason never fails the report; `not_reached`: not read to its end (the page filled first)" });
export type ReportProviderOutcome = z.infer<typeof ReportProviderOutcome>;

export const ReportCatalog = z.object({ dimensions: z.array(z.unknown()), metrics: z.array(z.unknown()), providers: z.array(z.unknown()), limits: z.unknown() }).meta({ id: "ReportCatalog" });

export const ReportPreviewQuery = pageQuery({ limit: 100, max: 10_000, cursor: "opaque" });
export const ReportPreview = z.object({ data: z.array(ReportOutputRow), next_cursor: z.string().nullable(), providers: z.array(ReportProviderOutcome) }).meta({ id: "ReportPreview" });

export const ReportExportView = z.object({
  id: z.string(), status: z.enum(EXPORT_STATUSES), request: ReportRequest,
  rows_written: z.number().meta({ description: "Rows written so far (progress)" }), bytes: z.number(),
  providers: z.array(ReportProviderOutcome).nullable(), error: z.string().nullable(),
  created_at: z.string(), started_at: z.string().nullable(), finished_at: z.string().nullable(),
  expires_at: z.string().meta({ description: "After this the file is deleted (REPORT_EXPORT_TTL_SECONDS after it is ready)" }),
  download_url: z.string().nullable(),
}).meta({ id: "ReportExport" });
export type ReportExportView = z.infer<typeof ReportExportView>;

export const ReportExportQuery = z.object({ mode: z.enum(["auto", "job"]).default("auto").meta({ description: "`job`: always run as a job (202), whatever the size" }) });

/** A report as CSV (the streamed export and an export's file). */
export const ReportCsv = z.string().meta({ description: `RFC 4180 CSV with a header line: ${REPORT_COLUMNS.join(", ")}` });
