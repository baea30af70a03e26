import type { OperatorCard, OperatorState } from "../kind.ts";
import { APPROVE_TEXT, BUTTON_TEXT, CARD_BUTTONS, FEEDBACK_BUTTONS, SNOOZE_BUTTON_MINUTES } from "../buttons.ts";

// An operator card as an Adaptive Card 1.5 (https://learn.microsoft.com/adaptive-cards/) with Universal Actions
// (Action.Execute, https://learn.microsoft.com/microsoftteams/platform/task-modules-and-cards/cards/universal-actions-for-adaptive-cards/overview):
// a press comes back to our interactivity URL as an `adaptiveCard/action` invoke (interactions.ts). Universal Actions
// need version 1.5, and a Teams client that cannot render Action.Execute may drop the button: each one falls back to
// an Action.Submit with the same data plus its `verb`, whose press comes back as a message activity. Trend text is
// data, not markup: every text that comes from a trend, a category, a person or a plan is a TextRun inside a
// RichTextBlock, which Adaptive Cards never read as markdown (a TextBlock would turn `[x](https://…)` into a link).
// Our own labels are TextRuns too, so nothing on the card is markdown. Each button's data carries the item id and
// the version the card shows (the interaction handler refuses a stale card's press), and its action or verdict.

/** Teams refuses a message over about 28 KB; these keep a card well under it. */
export const TEAMS_LIMITS = { title: 150, summary: 3000, field: 200, approvalLine: 300, approvalLines: 30, messageText: 20_000 } as const;

/** Snooze length of the card's Snooze button (as Slack's card). */
export { SNOOZE_BUTTON_MINUTES };
export const ACTION_VERB_PREFIX = "operator:";
export const FEEDBACK_VERB_PREFIX = "feedback:";
export const APPROVE_VERB = "approve";

const SEVERITY: Record<OperatorCard["severity"], { label: string; color: "Attention" | "Warning" | "Default" }> = {
  critical: { label: "Critical", color: "Attention" }, high: { label: "High", color: "Attention" }, medium: { label: "Medium", color: "Warning" }, low: { label: "Low", color: "Default" },
};
const STATE_LABEL: Record<OperatorState, string> = { open: "Open", acknowledged: "Acknowledged", snoozed: "Snoozed", resolved: "Resolved" };

export type TextRun = { type: "TextRun"; text: string; weight?: "Bolder"; size?: "Small" | "Large"; color?: string; isSubtle?: boolean };
export type SubmitAction = { type: "Action.Submit"; title: string; data: Record<string, unknown>; style?: "positive" | "destructive" };
export type ExecuteAction = { type: "Action.Execute"; title: string; verb: string; data: Record<string, unknown>; style?: "positive" | "destructive"; fallback: SubmitAction };
type Element =
  | { type: "RichTextBlock"; inlines: TextRun[]; spacing?: "Small" | "Medium" }
  | { type: "Container"; separator?: boolean; items: Element[] }
  | { type: "ActionSet"; actions: (ExecuteAction | { type: "Action.OpenUrl"; title: string; url: string })[] };
export interface AdaptiveCard { type: "AdaptiveCard"; $schema: string; version: "1.5"; body: Element[]; msteams: { width: "Full" } }

/** Cuts to `max` characters ending in "…", never inside a surrogate pair. */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  let t = s.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(t)) t = t.slice(0, -1);
  return `${t}…`;
}

const run = (text: string, style: Omit<TextRun, "type" | "text"> = {}): TextRun => ({ type: "TextRun", text, ...style });
const rich = (...inlines: TextRun[]): Element => ({ type: "RichTextBlock", inlines });

const formatVelocity = (v: number): string => {
  if (!Number.isFinite(v)) return "n/a";
  const r = Math.round(v * 100) / 100;
  return r > 0 ? `+${r}` : String(r);
};
const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** The briefing link as a button; null for anything but a reasonably sized http(s) URL. */
const briefingUrl = (url: string | null): string | null => (url && url.length <= 2000 && /^https?:\/\//i.test(url) ? url : null);

/** Data every press carries: the item, the version shown, and what was pressed (a Submit has no verb of its own). */
const execute = (title: string, verb: string, data: Record<string, unknown>, style?: "positive"): ExecuteAction => {
  const look = { title, ...(style ? { style } : {}) };
  return { type: "Action.Execute", ...look, verb, data, fallback: { type: "Action.Submit", ...look, data: { ...data, verb } } };
};

export function renderCard(card: OperatorCard): AdaptiveCard {
  const sev = SEVERITY[card.severity];
  const base = { item_id: card.itemId, version: card.version };
  const state: TextRun[] = [run(STATE_LABEL[card.state], { weight: "Bolder", size: "Small" })];
  if (card.state === "snoozed" && card.snoozedUntil) state.push(run(` until ${utc(card.snoozedUntil)}`, { size: "Small" }));
  if (card.acknowledgedBy && card.state !== "open") state.push(run(` · acknowledged by ${cut(card.acknowledgedBy, TEAMS_LIMITS.field)}`, { size: "Small" }));
  if (card.resolvedBy && card.state === "resolved") state.push(run(` · resolved by ${cut(card.resolvedBy, TEAMS_LIMITS.field)}`, { size: "Small" }));
  state.push(run(` · item ${card.itemId} v${card.version}`, { size: "Small", isSubtle: true }));

  const label = (l: string) => run(l, { weight: "Bolder" });
  const body: Element[] = [
    rich(run(`${sev.label}: `, { weight: "Bolder", size: "Large", color: sev.color }), run(cut(card.title.trim() || "Untitled trend", TEAMS_LIMITS.title), { weight: "Bolder", size: "Large" })),
    rich(run(cut(card.summary.trim() || "No summary.", TEAMS_LIMITS.summary))),
    rich(label("Velocity "), run(formatVelocity(card.velocity)), label(" · Occurrences "), run(String(card.occurrences)), label(" · Category "), run(cut(card.category, TEAMS_LIMITS.field))),
    rich(...state),
  ];

  const url = briefingUrl(card.briefingUrl);
  body.push({
    type: "ActionSet",
    actions: [
      ...CARD_BUTTONS[card.state].map((action, i) => execute(BUTTON_TEXT[action], `${ACTION_VERB_PREFIX}${action}`,
        { ...base, action, ...(action === "snooze" ? { snooze_minutes: SNOOZE_BUTTON_MINUTES } : {}) }, i === 0 ? "positive" : undefined)),
      ...(url ? [{ type: "Action.OpenUrl" as const, title: "Open the briefing", url }] : []),
    ],
  });
  // Feedback on the trend in every state: a resolved item can still turn out to have been noise.
  if (card.judgeable) {
    body.push({ type: "ActionSet", actions: FEEDBACK_BUTTONS.map((b) => execute(b.text, `${FEEDBACK_VERB_PREFIX}${b.verdict}`, { ...base, verdict: b.verdict })) });
  }
  const a = card.approval;
  if (a) {
    const lines = a.lines.slice(0, TEAMS_LIMITS.approvalLines).map((l) => rich(run(`• ${cut(l, TEAMS_LIMITS.approvalLine)}`)));
    if (a.lines.length > TEAMS_LIMITS.approvalLines) lines.push(rich(run(`… and ${a.lines.length - TEAMS_LIMITS.approvalLines} more`, { isSubtle: true })));
    const items: Element[] = [rich(label(`Ads plan (${cut(a.provider, TEAMS_LIMITS.field)})`)), ...lines];
    if (a.decided) items.push(rich(run(cut(a.decided, TEAMS_LIMITS.field), { weight: "Bolder" })));
    else items.push({ type: "ActionSet", actions: [execute(APPROVE_TEXT, APPROVE_VERB, { ...base, action: "approve", plan_id: a.planId, plan_hash: a.planHash }, "positive")] });
    body.push({ type: "Container", separator: true, items });
  }
  return { type: "AdaptiveCard", $schema: "http://adaptivecards.io/schemas/adaptive-card.json", version: "1.5", body, msteams: { width: "Full" } };
}

/** The notification text of a card (the activity's `summary`: what a toast or the activity feed shows). */
export const summaryOf = (card: OperatorCard): string =>
  cut(`${SEVERITY[card.severity].label}: ${card.title.trim() || "Untitled trend"} (${STATE_LABEL[card.state].toLowerCase()})`, 200);
