import { z } from "zod";
import { Id, text, Timestamp } from "./common.ts";
import { CategoryPath } from "./signals.ts";
import { ESCALATION, OPERATOR_ITEM_SOURCES, SEVERITIES, TREND_EVENT_TYPES, ADS_APPROVAL_EVENT_TYPE } from "./vocabulary.ts";

// Operator routing: an ordered list of rules per account (first match wins), each sending the items it matches to a
// chat channel (on a chat provider the account is connected to) with its own escalation steps. Items no rule
// matches take the default route: the chat connection's saved channel and settings (POST .../save-channel,
// PUT .../settings), with `default_escalation`.

const ProviderId = text({ min: 1, max: 40, trim: true }).regex(/^[a-z][a-z0-9_]*$/, "a chat provider id (`slack`, `teams`)");

export const RouteMatch = z
  .object({
    categories: z.array(CategoryPath).max(50).optional()
      .meta({ description: "Category prefixes (`tech` matches `tech/ai`); absent or empty: any category" }),
    min_severity: z.enum(SEVERITIES).optional().meta({ description: "At or above this severity; absent: any" }),
    sources: z.array(text({ min: 1, max: 40, trim: true })).max(20).optional()
      .meta({ description: `Where the item comes from: a signal source the trend drew mentions from in the last 24 h (\`x\`, \`reddit\`, \`youtube\`, \`google_trends\`, or an ingestion source), or ${OPERATOR_ITEM_SOURCES.map((s) => `\`${s}\``).join(", ")}; absent or empty: any` }),
    event_types: z.array(z.enum([...TREND_EVENT_TYPES, ADS_APPROVAL_EVENT_TYPE])).max(10).optional()
      .meta({ description: `The event that opens the item (\`${ADS_APPROVAL_EVENT_TYPE}\`: an ads plan waiting for approval); absent or empty: any` }),
  })
  .strict()
  .meta({ id: "OperatorRouteMatch", description: "Every condition given must hold" });
export type RouteMatch = z.infer<typeof RouteMatch>;

export const ChatMentionTarget = z
  .object({
    kind: z.enum(["user", "group", "channel"]).meta({ description: "A person, a user group, or everyone in the channel" }),
    id: text({ min: 1, max: 100, trim: true }).optional()
      .meta({ description: "The chat provider's id of the user or group (Slack `U…`/`S…`, Teams: the AAD object id); not for `channel`" }),
    name: text({ min: 1, max: 100, trim: true }).optional().meta({ description: "Display name (Teams shows it)" }),
  })
  .strict()
  .refine((m) => m.kind === "channel" || !!m.id, { message: "id is required for a user or group", path: ["id"] });

export const EscalationStep = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("wait"),
      minutes: z.number().min(ESCALATION.minWaitMinutes).max(ESCALATION.maxWaitMinutes)
        .meta({ description: `Minutes before the next step (${ESCALATION.minWaitMinutes}-${ESCALATION.maxWaitMinutes})` }),
    }).strict(),
    z.object({
      type: z.literal("notify"),
      mentions: z.array(ChatMentionTarget).min(1).max(10),
      message: text({ min: 1, max: 300, trim: true }).optional().meta({ description: "Text of the reply (default: the item is still open)" }),
    }).strict(),
    z.object({
      type: z.literal("notify_on_call"),
      schedule_id: Id.meta({ description: "An on-call schedule of this account (/api/operator/schedules): the reply mentions whoever is on call when the step runs", example: "sch_01kaq3m2b4c5d6e7f8g9h0jkmn" }),
      message: text({ min: 1, max: 300, trim: true }).optional().meta({ description: "Text of the reply (default: the item is still open)" }),
    }).strict(),
    z.object({
      type: z.literal("notify_webhook"),
      webhook_id: Id.meta({ description: "A webhook subscription of this account: it receives `operator.escalated` (whatever its event types)" }),
    }).strict(),
    z.object({
      type: z.literal("repeat"),
      times: z.number().int().min(1).max(ESCALATION.maxRepeats).meta({ description: "Go back to the first step, at most this many times" }),
    }).strict(),
  ])
  .meta({ id: "EscalationStep" });
export type EscalationStep = z.infer<typeof EscalationStep>;

/** Escalation steps: a repeat only as the last step, and only after a wait (a chain never loops without pausing). */
export const EscalationSteps = z.array(EscalationStep).max(ESCALATION.maxSteps).superRefine((steps, ctx) => {
  steps.forEach((s, i) => {
    if (s.type !== "repeat") return;
    if (i !== steps.length - 1) ctx.addIssue({ code: "custom", path: [i, "type"], message: "repeat must be the last step" });
    else if (!steps.some((x) => x.type === "wait")) ctx.addIssue({ code: "custom", path: [i, "type"], message: "a chain that repeats needs a wait step" });
  });
});

export const OperatorRouteInput = z
  .object({
    id: Id.optional().meta({
      description: "The id of a stored rule (from GET) this one replaces: it keeps its id, and the items it routes keep their rule. " +
        "Absent: a new rule. A stored rule left out of the list is deleted.",
      example: "rte_01kaq3m2b4c5d6e7f8g9h0jkmn",
    }),
    name: text({ min: 1, max: 100, trim: true }),
    match: RouteMatch,
    provider: ProviderId.meta({ description: "The chat provider the channel is on (`slack`, `teams`); the account must be connected to it" }),
    channel_id: text({ min: 1, max: 200, trim: true }).meta({ description: "A channel id from that provider's channel list" }),
    escalation: EscalationSteps.default([]).meta({ description: "Steps while an item of this route is open and nobody acknowledged it; empty: none" }),
  })
  .strict();

export const OperatorRoutesBody = z
  .object({
    routes: z.array(OperatorRouteInput).max(ESCALATION.maxRoutes)
      .superRefine((routes, ctx) => {
        const first = new Map<string, number>();
        routes.forEach((r, i) => {
          if (r.id === undefined) return;
          const at = first.get(r.id);
          if (at === undefined) first.set(r.id, i);
          else ctx.addIssue({ code: "custom", path: [i, "id"], message: `rule ${r.id} is already at routes.${at}: list each rule once`, params: { code: "duplicate_route" }, input: r.id });
        });
      })
      .meta({ description: "In order: the first rule that matches an item routes it" }),
    default_escalation: EscalationSteps.default([]).meta({ description: "Escalation of items no rule matches (the default route); empty: the settings' reminder of critical items" }),
  })
  .strict()
  .meta({ id: "OperatorRoutesBody" });
export type OperatorRoutesBody = z.infer<typeof OperatorRoutesBody>;

export const OperatorRoute = z
  .object({
    id: z.string(),
    position: z.number().int(),
    name: z.string(),
    match: RouteMatch,
    provider: z.string(),
    channel_id: z.string(),
    escalation: z.array(EscalationStep),
    updated_at: Timestamp,
  })
  .meta({ id: "OperatorRoute" });

export const OperatorRoutes = z
  .object({
    routes: z.array(OperatorRoute),
    default: z.object({
      provider: z.string().nullable().meta({ description: "The chat connection the default route posts through (the first connected chat provider), or null" }),
      channel_id: z.string().nullable().meta({ description: "Its saved channel (POST /api/integrations/chat/save-channel), or null" }),
      escalation: z.array(EscalationStep),
    }),
  })
  .meta({ id: "OperatorRoutes" });
export type OperatorRoutes = z.infer<typeof OperatorRoutes>;
