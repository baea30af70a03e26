import { chatMessages } from "./chat-messages.ts";
import { operatorTicks } from "./operator-ticks.ts";
import { signalsIngest } from "./signals-ingest.ts";
import { socialPoll } from "./social-poll.ts";
import { trendDetection } from "./trend-detection.ts";
import { trendEvents } from "./trend-events.ts";
import type { ProcessorFactory } from "./types.ts";
import { webhookDelivery } from "./webhook-delivery.ts";

export const ALL_PROCESSORS: ProcessorFactory[] = [signalsIngest, trendDetection, trendEvents, webhookDelivery, socialPoll, chatMessages, operatorTicks];
export type { Processor, ProcessorFactory, WorkerDeps } from "./types.ts";
