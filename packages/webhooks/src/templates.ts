import Mustache from "mustache";
import {
  escapeMrkdwn, escapeSlackUrl, exampleOperationalEvent, exampleTrendEvent, OPERATIONAL_EVENT_TYPES, TREND_EVENT_TYPES, type BodyTemplate,
} from "@trendgate/contracts";
import { serializePayload } from "./jobs.ts";
import { payloadFromEvent } from "./payload.ts";

// Body templates for receivers that want their own shape, chat incoming webhooks above all (Slack, Discord, Microsoft
// Teams), so a team without an app still gets cards. Mustache is logic-less (no code runs, whatever the template
// says); every value is JSON-escaped, so an event's text cannot break out of a string; and a template must render
// valid JSON for the example events before it is saved. The delivery is signed over the rendered body. In a preset,
// trend text is data, not markup, as on the app's own cards: it is escaped for the chat first (PRESET_ESCAPES), so a
// trend name cannot mention anyone or disguise a link (nor format a Discord or Teams message: Slack has no escape for
// *bold* and the like); custom templates are their owners' and keep plain JSON escaping.

type PresetFormat = Exclude<BodyTemplate["format"], "custom">;

/** Presets for chat incoming webhooks. Trend fields are blank for operational events, which show their type. */
export const TEMPLATE_PRESETS: Record<PresetFormat, string> = {
  slack: `{"text": "{{#trend_name}}{{severity}}: {{trend_name}} ({{category}}) — {{summary}}{{/trend_name}}{{^trend_name}}{{event_type}}{{/trend_name}}",
 "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "{{#trend_name}}*{{trend_name}}* · {{severity}} · {{category}}\\n{{summary}}\\n<{{source_link}}|Open the briefing>{{/trend_name}}{{^trend_name}}*{{event_type}}*{{/trend_name}}"}}]}`,
  discord: `{"content": "{{#trend_name}}**{{trend_name}}** · {{severity}} · {{category}}\\n{{summary}}\\n{{source_link}}{{/trend_name}}{{^trend_name}}**{{event_type}}**{{/trend_name}}", "allowed_mentions": {"parse": []}}`,
  teams: `{"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive", "content": {
  "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard", "version": "1.4",
  "body": [{"type": "RichTextBlock", "inlines": [{"type": "TextRun", "weight": "Bolder", "size": "Medium", "text": "{{#trend_name}}{{trend_name}} · {{severity}}{{/trend_name}}{{^trend_name}}{{event_type}}{{/trend_name}}"}]},
           {"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": "{{summary}}"}]}],
  "actions": [{{#source_link}}{"type": "Action.OpenUrl", "title": "Open the briefing", "url": "{{source_link}}"}{{/source_link}}]}}]}`,
};

/**
 * Discord markdown made literal: a backslash before its markup characters (emphasis, code, spoilers, masked links,
 * `<@id>`/`<#id>`/`<t:…>` tags) and before headings, quotes and list marks at a line's start; a zero-width space keeps
 * `@everyone`/`@here` from reading as mentions (the preset's allowed_mentions already keeps them from pinging).
 */
const escapeDiscord = (s: string): string => s
  .replace(/[\\*_~`|<>[\]()]/g, "\\$&")
  .replace(/^([ \t]*)([#+-]|\d+\.)/gm, "$1\\$2")
  .replace(/@(everyone|here)/gi, "@\u200b$1");

const asIs = (s: string) => s;

/**
 * Each preset's escaping of the view's text, and of `source_link` (our briefing URL, which must stay a link). Teams
 * needs none: its preset puts text in TextRuns, which Adaptive Cards never read as markdown (a TextBlock's markdown
 * has no escape character), as the app's Teams cards do.
 */
const PRESET_ESCAPES: Record<PresetFormat, { text: (s: string) => string; link: (url: string) => string }> = {
  slack: { text: escapeMrkdwn, link: escapeSlackUrl },
  discord: { text: escapeDiscord, link: asIs },
  teams: { text: asIs, link: asIs },
};

/** Every string in `v`, however nested, through `f`. */
const mapStrings = (v: unknown, f: (s: string) => string): unknown =>
  typeof v === "string" ? f(v)
  : Array.isArray(v) ? v.map((x) => mapStrings(x, f))
  : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, f)]))
  : v;

/** A string's JSON escaping without its quotes: what may appear between the quotes of a JSON string. */
const jsonEscape = (v: unknown) => JSON.stringify(String(v)).slice(1, -1);

/** The template's text: a preset's, or the custom one. */
export const templateText = (t: BodyTemplate) => (t.format === "custom" ? t.template! : TEMPLATE_PRESETS[t.format]);

/**
 * Renders a delivery body (as the subscription would otherwise receive it) through the template. `view`: the body's
 * fields (nested `data` of operational events included) plus `event_type`. Throws when the result is not JSON.
 */
export function renderBody(t: BodyTemplate, body: string, eventType: string | null): string {
  let view: Record<string, unknown> = { ...(JSON.parse(body) as Record<string, unknown>), event_type: eventType ?? "" };
  if (t.format !== "custom") {
    const esc = PRESET_ESCAPES[t.format];
    const link = view.source_link;
    view = { ...(mapStrings(view, esc.text) as Record<string, unknown>), ...(typeof link === "string" ? { source_link: esc.link(link) } : {}) };
  }
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
