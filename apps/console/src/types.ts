// The API's JSON shapes the console reads and sends: the contracts' own types (packages/contracts), imported as types
// only, so esbuild erases them and no zod reaches the browser bundle. Pages name them through this file. What the
// console reads is a schema's output (`z.output`); what it sends is a request schema's input (`z.input`: defaults
// and optional fields as a caller may leave them out). The fixed values (severities, trigger types, ...) are
// imported at runtime from "@trendgate/contracts/vocabulary" (zod-free), never from "@trendgate/contracts".
import type { z } from "zod";
import type {
  AccountEvent as AccountEventSchema,
  AccountEventList as AccountEventListSchema,
  AdsApplyAccepted as AdsApplyAcceptedSchema,
  AdsApplyRequest as AdsApplyRequestSchema,
  AdsPlanView,
  AdsProvider as AdsProviderSchema,
  AdsProviderList as AdsProviderListSchema,
  AdsRunList as AdsRunListSchema,
  AdsSelectionBody as AdsSelectionBodySchema,
  ChatChannelList as ChatChannelListSchema,
  ChatProviderList as ChatProviderListSchema,
  ConnectionList as ConnectionListSchema,
  ConsoleAccess as ConsoleAccessSchema,
  CreateFeedbackBody as CreateFeedbackBodySchema,
  CreateMuteBody as CreateMuteBodySchema,
  CreateWebhookBody as CreateWebhookBodySchema,
  DELIVERY_MODES,
  FeedbackResult as FeedbackResultSchema,
  HolidayCalendarBody as HolidayCalendarBodySchema,
  Mute as MuteSchema,
  MuteList as MuteListSchema,
  OperatorActionBody as OperatorActionBodySchema,
  OperatorItemList as OperatorItemListSchema,
  OperatorItemWithHistory as OperatorItemWithHistorySchema,
  OperatorRoutes as OperatorRoutesSchema,
  OperatorRoutesBody as OperatorRoutesBodySchema,
  OnCallSchedule as OnCallScheduleSchema,
  OnCallScheduleBody as OnCallScheduleBodySchema,
  QueueDepth as QueueDepthSchema,
  QueuedDelivery as QueuedDeliverySchema,
  RecoverResult as RecoverResultSchema,
  ReportCatalog as ReportCatalogSchema,
  ReportPreview as ReportPreviewSchema,
  ReportRequest as ReportRequestSchema,
  RotatedSecret as RotatedSecretSchema,
  SocialConnectionStatus as SocialConnectionStatusSchema,
  SocialProviderList as SocialProviderListSchema,
  StatusResponse,
  TableSize as TableSizeSchema,
  TrendList as TrendListSchema,
  TRIGGER_TYPES,
  UpdateWebhookBody as UpdateWebhookBodySchema,
  WebhookEventType as WebhookEventTypeSchema,
  WebhookExecution,
  WebhookExecutionList as WebhookExecutionListSchema,
  WebhookList as WebhookListSchema,
  WebhookPreviewBody as WebhookPreviewBodySchema,
  WebhookWithSecret as WebhookWithSecretSchema,
} from "@trendgate/contracts";

export type {
  AdsSelection, AdsPlanView, AuthorizationStart, ConnectionStatus, Disconnected, FeedbackVerdict, HolidayCalendar, OperatorActionName, OperatorItem,
  OperatorItemState, Problem, ReportExportView, ReportOutputRow, ReportProviderOutcome, ReportRequest, Sensitivity, StatusResponse, Trend, Webhook,
  WebhookBacktest, WebhookExecution,
} from "@trendgate/contracts";

// Console session exchange (POST /api/console/sessions/exchange)
export type ConsoleAccess = z.output<typeof ConsoleAccessSchema>;

// GET /status: the extra fields come with the admin token only
export type StatusCheck = StatusResponse["checks"]["postgres"];
export type QueueDepth = z.output<typeof QueueDepthSchema>;
export type TableSize = z.output<typeof TableSizeSchema>;

// Trends
export type TrendList = z.output<typeof TrendListSchema>;

// Webhooks
export type TriggerType = keyof typeof TRIGGER_TYPES;
export type DeliveryMode = keyof typeof DELIVERY_MODES;
export type WebhookEventType = z.output<typeof WebhookEventTypeSchema>;
export type ExecutionOutcome = WebhookExecution["outcome"];
export type WebhookList = z.output<typeof WebhookListSchema>;
export type WebhookWithSecret = z.output<typeof WebhookWithSecretSchema>;
export type CreateWebhookBody = z.input<typeof CreateWebhookBodySchema>;
export type UpdateWebhookBody = z.input<typeof UpdateWebhookBodySchema>;
export type RotatedSecret = z.output<typeof RotatedSecretSchema>;
export type QueuedDelivery = z.output<typeof QueuedDeliverySchema>;
export type RecoverResult = z.output<typeof RecoverResultSchema>;
export type WebhookExecutionList = z.output<typeof WebhookExecutionListSchema>;
/** POST …/webhooks/preview: a subscription's rules and how many days back to replay them (answered by a WebhookBacktest). */
export type WebhookPreviewBody = z.input<typeof WebhookPreviewBodySchema>;
export type AccountEvent = z.output<typeof AccountEventSchema>;
export type AccountEventList = z.output<typeof AccountEventListSchema>;

// Connections
export type SocialProviderList = z.output<typeof SocialProviderListSchema>;
export type SocialConnectionStatus = z.output<typeof SocialConnectionStatusSchema>;

// Operator queue
export type OperatorItemWithHistory = z.output<typeof OperatorItemWithHistorySchema>;
export type OperatorItemList = z.output<typeof OperatorItemListSchema>;
export type OperatorActionBody = z.input<typeof OperatorActionBodySchema>;

// Operator routing rules and escalation (GET/PUT /api/operator/routes) and a chat provider's channels
export type OperatorRoutes = z.output<typeof OperatorRoutesSchema>;
export type OperatorRoute = OperatorRoutes["routes"][number];
export type OperatorRoutesBody = z.input<typeof OperatorRoutesBodySchema>;
export type EscalationStep = OperatorRoute["escalation"][number];
export type RouteMatch = OperatorRoute["match"];
export type ChatChannelList = z.output<typeof ChatChannelListSchema>;
export type ChatProviderList = z.output<typeof ChatProviderListSchema>;
export type ChatProvider = ChatProviderList["data"][number];
export type ConnectionList = z.output<typeof ConnectionListSchema>;

// Mutes
export type Mute = z.output<typeof MuteSchema>;
export type MuteList = z.output<typeof MuteListSchema>;
export type CreateMuteBody = z.input<typeof CreateMuteBodySchema>;

// On-call schedules (/api/operator/schedules)
export type OnCallSchedule = z.output<typeof OnCallScheduleSchema>;
export type OnCallScheduleBody = z.input<typeof OnCallScheduleBodySchema>;

// Holiday calendar (GET/PUT/DELETE /api/calendar) and feedback on trends
export type HolidayCalendarBody = z.input<typeof HolidayCalendarBodySchema>;
export type CreateFeedbackBody = z.input<typeof CreateFeedbackBodySchema>;
export type FeedbackResult = z.output<typeof FeedbackResultSchema>;

// ---- Where a contract leaves a field `unknown` ----------------------------------------------------------------------
// The console reads these fields, so it states their shape here, on top of the contract's type: `Narrow` replaces
// only the fields named, and only fields the contract has. The shapes are those the server builds
// (packages/ads/src/plan.ts DiffRow and RefusedChange; packages/reports/src/catalog.ts and the catalog route); they
// belong in the contracts once typed there.
type Narrow<T, N extends { [K in keyof T]?: unknown }> = Omit<T, keyof N> & N;

// Ads
export type AdsProvider = z.output<typeof AdsProviderSchema>;
export type AdsProviderList = z.output<typeof AdsProviderListSchema>;
/** What PUT …/selection takes (GET and PUT answer an AdsSelection: the defaults applied). */
export type AdsSelectionBody = z.input<typeof AdsSelectionBodySchema>;
export interface AdsDiffRow {
  entity_id: string; entity_name: string | null; field: string; before: string[]; after: string[];
  changes: { change_id: string; op: "add" | "remove"; item: string; trend: { id: string; name: string } | null }[];
}
export interface AdsRefusedChange { change_id: string; entity_id: string; field: string; item: string; trend_id: string | null; rule: string; reason: string }
export type AdsPlan = Narrow<AdsPlanView, { diff: AdsDiffRow[]; refused: AdsRefusedChange[] }>;
export type AdsRunList = Narrow<z.output<typeof AdsRunListSchema>, { data: AdsPlan[] }>;
export type AdsApplyRequest = z.input<typeof AdsApplyRequestSchema>;
export type AdsApplyAccepted = z.output<typeof AdsApplyAcceptedSchema>;

// Reports
/** What the preview and the exports take (the response's `request` is a ReportRequest: the defaults applied). */
export type ReportRequestBody = z.input<typeof ReportRequestSchema>;
export type ReportPreview = z.output<typeof ReportPreviewSchema>;
export interface ReportCatalogProvider {
  provider: string; display_name: string; connected: boolean; reporting: boolean;
  levels?: string[]; granularities?: string[]; max_range_days?: number; max_lookback_days?: number;
  clicks?: string; conversions?: string; async_jobs?: boolean;
}
export type ReportCatalog = Narrow<z.output<typeof ReportCatalogSchema>, {
  dimensions: { name: string; description: string }[];
  metrics: { name: string; description: string; computed?: boolean }[];
  providers: ReportCatalogProvider[];
  limits: Record<string, number>;
}>;
