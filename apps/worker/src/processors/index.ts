import type { Processor } from "./types.ts";
import { signalsIngest } from "./signals-ingest.ts";

export const ALL_PROCESSORS: Processor[] = [signalsIngest];
export type { Processor, WorkerDeps } from "./types.ts";
