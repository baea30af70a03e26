import Mustache from "mustache";
import { exampleOperationalEvent, exampleTrendEvent, OPERATIONAL_EVENT_TYPES, TREND_EVENT_TYPES, type BodyTemplate } from "@trendgate/contracts";
import { serializePayload } from "./jobs.ts";
import { payloadFromEvent } from "./payload.ts";

// Body templates for receivers that want their own shape, chat incoming webhooks above all (Slack, Discord, Microsoft
// Teams), so a team without an app still gets cards. Mustache is logic-less (no code runs, whatever the template
// says); every value is JSON-escaped, so an event's text cannot break out of a string; and a template must render
// valid JSON for the example events before it is saved. The delivery is signed over the rendered body.

/** Presets for chat incoming webhooks. Trend fields are blank for operational events, which show their type. */
export const TEMPLATE_PRESETS: Record<Exclude<BodyTemplate["format"], "custom">, string> = {
  slack: `{"text": "{{#trend_name}}{{severity}}: {{trend_name}} ({{category}}) — {{summary}}{{/trend_name}}{{^trend_name}}{{event_type}}{{/trend_name}}",
 "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "{{#trend_name}}*{{trend_name}}* · {{severity}} · {{category}}\\n{{summary}}\\n<{{source_link}}|Open the briefing>{{/trend_name}}{{^trend_name}}*{{event_type}}*{{/trend_name}}"}}]}`,
  discord: `{"content": "{{#trend_name}}**{{trend_name}}** · {{severity}} · {{category}}\\n{{summary}}\\n{{source_link}}{{/trend_name}}{{^trend_name}}**{{event_type}}**{{/trend_name}}", "allowed_mentions": {"parse": []}}`,
  teams: `{"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive", "content": {
  "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard", "version": "1.4",
  "body": [{"type": "TextBlock", "weight": "Bolder", "size": "Medium", "wrap": true, "text": "{{#trend_name}}{{trend_name}} · {{severity}}{{/trend_name}}{{^trend_name}}{{event_type}}{{/trend_name}}"},
           {"type": "TextBlock", "wrap": true, "text": "{{summary}}"}],
  "actions": [{{#source_link}}{"type": "Action.OpenUrl", "title": "Open the briefing", "url": "{{source_link}}"}{{/source_link}}]}}]}`,
};

/** A string's JSON escaping without its quotes: what may appear between the quotes of a JSON string. */
const jsonEscape = (v: unknown) => JSON.stringify(String(v)).slice(1, -1);

/** The template's text: a preset's, or the custom one. */
export const templateText = (t: BodyTemplate) => (t.format === "custom" ? t.template! : TEMPLATE_PRESETS[t.format]);

/**
 * Renders a delivery body (as the subscription would otherwise receive it) through the template. `view`: the body's
 * fields (nested `data` of operational events included) plus `event_type`. Throws when the result is not JSON.
 */
export function renderBody(t: BodyTemplate, body: string, eventType: string | null): string {
  const view = { ...(JSON.parse(body) as Record<string, unknown>), event_type: eventType ?? "" };
  const out = Mustache.render(templateText(t), view, undefined, { escape: jsonEscape });
  return JSON.stringify(JSON.parse(out)); // valid JSON, compact
}

/** Mustache tokens that would let a value out of its JSON escaping, or pull in text from elsewhere. */
const REFUSED_TOKENS: Record<string, string> = { "&": "unescaped tags ({{{…}}} or {{&…}})", ">": "partials ({{>…}})" };

/**
 * Why a template cannot be saved (null: it renders valid JSON for an example of every event type it may receive,
 * `types`: a subscription's event_types, or the trend events for the spec's trigger types).
 */
export function templateProblem(t: BodyTemplate, types: readonly string[] = TREND_EVENT_TYPES): string | null {
  const text = templateText(t);
  if (text.includes("{{=")) return "delimiter changes ({{=…=}}) are not allowed";
  let tokens: unknown[];
  try {
    tokens = Mustache.parse(text) as unknown[];
  } catch (err) {
    return `not a Mustache template: ${(err as Error).message}`;
  }
  const walk = (ts: unknown[]): string | null => {
    for (const tk of ts as [string, string, number, number, unknown[]?][]) {
      if (REFUSED_TOKENS[tk[0]]) return `${REFUSED_TOKENS[tk[0]]} are not allowed: every value is JSON-escaped`;
      if (Array.isArray(tk[4])) { const inner = walk(tk[4]); if (inner) return inner; }
    }
    return null;
  };
  const refused = walk(tokens);
  if (refused) return refused;
  // Examples with text that needs escaping: quotes, a backslash, a line break.
  const tricky = { trend_name: 'Say "hi" \\ now', summary: "line one\nline two \"quoted\"" };
  const bodies: [string, string][] = [
    ...TREND_EVENT_TYPES.map((type): [string, string] => [type, serializePayload({ ...payloadFromEvent(exampleTrendEvent(type)), ...tricky })]),
    ...OPERATIONAL_EVENT_TYPES.map((type): [string, string] => [type, JSON.stringify(exampleOperationalEvent(type))]),
  ].filter(([type]) => types.includes(type));
  for (const [type, body] of bodies) {
    try {
      renderBody(t, body, type);
    } catch (err) {
      return `does not render valid JSON for a ${type} event (${(err as Error).message}): put string tags inside quotes`;
    }
  }
  return null;
}
