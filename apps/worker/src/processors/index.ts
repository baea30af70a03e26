import { signalsIngest } from "./signals-ingest.ts";
import { trendEvents } from "./trend-events.ts";
import type { ProcessorFactory } from "./types.ts";
import { webhookDelivery } from "./webhook-delivery.ts";

export const ALL_PROCESSORS: ProcessorFactory[] = [signalsIngest, trendEvents, webhookDelivery];
export type { Processor, ProcessorFactory, WorkerDeps } from "./types.ts";
