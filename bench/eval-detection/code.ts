import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// The production functions a detection pass runs, loaded from a checkout of the repository: this one by default, or
// EVAL_CODE_ROOT (e.g. a `git worktree` of an older commit) to compare before and after. They are imported, never
// copied, so the evaluation cannot drift from what the worker does.

type Detection = typeof import("../../packages/trends/src/detection/index.ts");
type Decide = typeof import("../../packages/trends/src/engine/decide.ts");
type Triggers = typeof import("../../packages/webhooks/src/triggers.ts");
type Vocabulary = typeof import("../../packages/contracts/src/vocabulary.ts");
type Config = typeof import("../../packages/config/src/index.ts");

export interface ProductionCode {
  root: string;
  assessNow: Detection["assessNow"];
  resolveConfig: Detection["resolveConfig"];
  /** The worker's fit cache between passes (absent in a checkout from before it). */
  FitCache?: Detection["FitCache"];
  PARTIAL_MIN_SECONDS: number;
  decide: Decide["decide"];
  DEFAULT_EVENT_RULES: Decide["DEFAULT_EVENT_RULES"];
  triggerFires: Triggers["triggerFires"];
  /** Feedback's evidence bar for a net count of detections judged not a trend (1 in a checkout without feedback). */
  evidenceBarFor: Vocabulary["evidenceBarFor"];
  /** That checkout's configuration loader: its defaults (pass interval, history) are part of what it runs. */
  loadConfig: Config["loadConfig"];
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export async function loadProductionCode(root = process.env.EVAL_CODE_ROOT || REPO_ROOT): Promise<ProductionCode> {
  const resolved = path.resolve(root);
  const load = (file: string) => import(pathToFileURL(path.join(resolved, file)).href);
  const detection = (await load("packages/trends/src/detection/index.ts")) as Detection;
  const decide = (await load("packages/trends/src/engine/decide.ts")) as Decide;
  // packages/webhooks was packages/connectors/webhook before 3 December 2026: older checkouts keep it there.
  const triggers = (await load("packages/webhooks/src/triggers.ts").catch(() => load("packages/connectors/webhook/src/triggers.ts"))) as Triggers;
  const vocabulary = (await load("packages/contracts/src/vocabulary.ts").catch(() => ({}))) as Partial<Vocabulary>;
  const config = (await load("packages/config/src/index.ts")) as Config;
  return {
    root: resolved,
    assessNow: detection.assessNow,
    resolveConfig: detection.resolveConfig,
    FitCache: (detection as Partial<Detection>).FitCache,
    PARTIAL_MIN_SECONDS: detection.PARTIAL_MIN_SECONDS,
    decide: decide.decide,
    DEFAULT_EVENT_RULES: decide.DEFAULT_EVENT_RULES,
    triggerFires: triggers.triggerFires,
    evidenceBarFor: vocabulary.evidenceBarFor ?? (() => 1),
    loadConfig: config.loadConfig,
  };
}
