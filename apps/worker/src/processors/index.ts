import { chatMessages } from "./chat-messages.ts";
import { adsApplies } from "./ads-applies.ts";
import { reportExports } from "./report-exports.ts";
import { retention } from "./retention.ts";
import { conversionEvents } from "./conversion-events.ts";
import { operatorTicks } from "./operator-ticks.ts";
import { signalsIngest } from "./signals-ingest.ts";
import { socialPoll } from "./social-poll.ts";
import { trendDetection } from "./trend-detection.ts";
import { trendEvents } from "./trend-events.ts";
import type { ProcessorFactory } from "./types.ts";
import { webhookDelivery } from "./webhook-delivery.ts";
import { webhookTicks } from "./webhook-ticks.ts";
import { workflowConfirmations } from "./workflow-confirmations.ts";
import { workflowPushes } from "./workflow-pushes.ts";

export const ALL_PROCESSORS: ProcessorFactory[] = [signalsIngest, trendDetection, trendEvents, webhookDelivery, socialPoll, chatMessages, conversionEvents, operatorTicks, workflowPushes, workflowConfirmations, adsApplies, reportExports, retention, webhookTicks];
export type { Processor, ProcessorFactory, WorkerDeps } from "./types.ts";
