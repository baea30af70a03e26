import { escapeMrkdwn, escapeSlackUrl } from "@trendgate/contracts";
import type { OperatorAction, OperatorCard, OperatorState } from "../kind.ts";
import { SLACK_MENTION } from "./schemas.ts";
import { APPROVE_TEXT, BUTTON_TEXT, CARD_BUTTONS, FEEDBACK_BUTTONS, SNOOZE_BUTTON_MINUTES } from "../buttons.ts";

// An operator card as a Block Kit message (https://docs.slack.dev/reference/block-kit). Trend text is data, not
// markup: it is escaped (&, <, >) so a title can never carry a mention or a link, and every text is cut to Slack's
// limit (Slack refuses the whole message with invalid_blocks otherwise). The buttons carry the item id and the
// version the card shows; the interaction handler checks that version, so a stale card cannot overwrite a newer state.

export const SLACK_LIMITS = {
  headerText: 150,
  sectionText: 3000,
  fieldText: 2000,
  contextText: 3000,
  buttonText: 75,
  buttonValue: 2000,
  /** Our cap on the notification fallback (Slack's own is 40,000; notifications show far less). */
  fallbackText: 3000,
  /** Slack's cap on a message's `text` (thread replies). */
  messageText: 40_000,
} as const;

/** Snooze length of the card's Snooze button. */
export { SNOOZE_BUTTON_MINUTES };

export const ACTION_PREFIX = "operator:";
/** Feedback buttons: `feedback:not_a_trend`, `feedback:useful`. */
/** The approve button of an ads-approval card. */
export const APPROVE_ACTION = "ads:approve";
export const FEEDBACK_PREFIX = "feedback:";

type PlainText = { type: "plain_text"; text: string; emoji?: boolean };
type Mrkdwn = { type: "mrkdwn"; text: string };
type Button = { type: "button"; action_id: string; text: PlainText; value: string; style?: "primary" | "danger" };
export type CardBlock =
  | { type: "header"; text: PlainText }
  | { type: "section"; text: Mrkdwn; fields?: Mrkdwn[] }
  | { type: "context"; elements: Mrkdwn[] }
  | { type: "actions"; block_id: string; elements: Button[] };

/** Cuts to `max` characters ending in "…", never inside a surrogate pair or an &entity; of escaped text. */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  let t = s.slice(0, max - 1);
  const amp = t.lastIndexOf("&");
  if (amp !== -1 && amp >= t.length - 5 && !t.slice(amp).includes(";")) t = t.slice(0, amp);
  if (/[\uD800-\uDBFF]$/.test(t)) t = t.slice(0, -1);
  return `${t}…`;
}

const SEVERITY: Record<OperatorCard["severity"], { emoji: string; label: string }> = {
  critical: { emoji: ":rotating_light:", label: "Critical" },
  high: { emoji: ":red_circle:", label: "High" },
  medium: { emoji: ":large_orange_circle:", label: "Medium" },
  low: { emoji: ":white_circle:", label: "Low" },
};

const STATE_LABEL: Record<OperatorState, string> = { open: "Open", acknowledged: "Acknowledged", snoozed: "Snoozed", resolved: "Resolved" };


/** The mention a card carries: critical items still open, and only a well-formed mention (never free text). */
const mentionOf = (card: OperatorCard): string | null =>
  card.severity === "critical" && card.state === "open" && card.mention && SLACK_MENTION.test(card.mention) ? card.mention : null;

/** `<url|label>`; null for anything but a reasonably sized http(s) URL. */
function link(url: string | null, label: string): string | null {
  if (!url || url.length > 2000 || !/^https?:\/\//i.test(url)) return null;
  return `<${escapeSlackUrl(url)}|${label}>`;
}

const formatVelocity = (v: number): string => {
  if (!Number.isFinite(v)) return "n/a";
  const r = Math.round(v * 100) / 100;
  return r > 0 ? `+${r}` : String(r);
};

/** Slack renders `<!date^…>` in each reader's time zone; the fallback is UTC. */
const slackDate = (d: Date): string =>
  `<!date^${Math.floor(d.getTime() / 1000)}^{date_short_pretty} at {time}|${d.toISOString().slice(0, 16).replace("T", " ")} UTC>`;

function stateLine(card: OperatorCard): string {
  const parts = [`*${STATE_LABEL[card.state]}*`];
  if (card.state === "snoozed" && card.snoozedUntil) parts.push(`until ${slackDate(card.snoozedUntil)}`);
  if (card.acknowledgedBy && card.state !== "open") parts.push(`· acknowledged by ${escapeMrkdwn(card.acknowledgedBy)}`);
  if (card.resolvedBy && card.state === "resolved") parts.push(`· resolved by ${escapeMrkdwn(card.resolvedBy)}`);
  return parts.join(" ");
}

/** A button's value: what the interaction handler needs, nothing it should trust beyond a lookup. */
export const buttonValue = (card: OperatorCard, action: OperatorAction): string =>
  JSON.stringify({ item_id: card.itemId, version: card.version, ...(action === "snooze" ? { snooze_minutes: SNOOZE_BUTTON_MINUTES } : {}) });

export function renderCard(card: OperatorCard): { text: string; blocks: CardBlock[] } {
  const sev = SEVERITY[card.severity];
  const mention = mentionOf(card);
  const title = card.title.trim() || "Untitled trend";

  const briefing = link(card.briefingUrl, "Open the briefing");
  const head = mention ? `${mention} ` : "";
  const tail = briefing ? `\n${briefing}` : "";
  const summary = cut(escapeMrkdwn(card.summary.trim() || "No summary."), SLACK_LIMITS.sectionText - head.length - tail.length);

  const blocks: CardBlock[] = [
    { type: "header", text: { type: "plain_text", text: cut(`${sev.emoji} ${title}`, SLACK_LIMITS.headerText), emoji: true } },
    {
      type: "section",
      text: { type: "mrkdwn", text: `${head}${summary}${tail}` },
      fields: [
        { type: "mrkdwn", text: `*Severity*\n${sev.label}` },
        { type: "mrkdwn", text: `*Velocity*\n${formatVelocity(card.velocity)}` },
        { type: "mrkdwn", text: `*Occurrences*\n${card.occurrences}` },
        { type: "mrkdwn", text: cut(`*Category*\n${escapeMrkdwn(card.category)}`, SLACK_LIMITS.fieldText) },
      ],
    },
    { type: "context", elements: [{ type: "mrkdwn", text: cut(`${stateLine(card)} · item \`${card.itemId}\` v${card.version}`, SLACK_LIMITS.contextText) }] },
    {
      type: "actions",
      block_id: "operator_actions",
      elements: CARD_BUTTONS[card.state].map((action, i): Button => ({
        type: "button",
        action_id: `${ACTION_PREFIX}${action}`,
        text: { type: "plain_text", text: cut(BUTTON_TEXT[action], SLACK_LIMITS.buttonText), emoji: true },
        value: buttonValue(card, action),
        ...(i === 0 ? { style: "primary" as const } : {}),
      })),
    },
  ];
  // An ads plan waiting for approval: its changes (service text from the plan, escaped), and the button bound to its hash.
  if (card.approval) {
    const a = card.approval;
    blocks.splice(2, 0, { type: "section", text: { type: "mrkdwn", text: cut(`*Changes*\n${a.lines.map((l) => escapeMrkdwn(l)).join("\n")}`, SLACK_LIMITS.sectionText) } });
    if (a.decided) {
      blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: cut(`Plan ${escapeMrkdwn(a.decided)}`, SLACK_LIMITS.contextText) }] });
    } else {
      blocks.push({
        type: "actions", block_id: "ads_approval",
        elements: [{
          type: "button", action_id: APPROVE_ACTION, style: "primary", text: { type: "plain_text", text: APPROVE_TEXT, emoji: true },
          value: JSON.stringify({ item_id: card.itemId, plan_id: a.planId, plan_hash: a.planHash }),
        }],
      });
    }
  }
  // Feedback on the trend in every state: a resolved item can still turn out to have been noise.
  if (card.judgeable) {
    blocks.push({
      type: "actions",
      block_id: "trend_feedback",
      elements: FEEDBACK_BUTTONS.map((b): Button => ({
        type: "button", action_id: `${FEEDBACK_PREFIX}${b.verdict}`, text: { type: "plain_text", text: b.text, emoji: true },
        value: JSON.stringify({ item_id: card.itemId }),
      })),
    });
  }

  const text = cut(`${head}${sev.label}: ${escapeMrkdwn(title)} (${STATE_LABEL[card.state].toLowerCase()}) ${escapeMrkdwn(card.summary.trim())}`.trim(), SLACK_LIMITS.fallbackText);
  return { text, blocks };
}
