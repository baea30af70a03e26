import { exampleTrendEvent, OPERATIONAL_EVENT_TYPES, TREND_EVENT_TYPES } from "@trendgate/contracts";
import { payloadFromEvent, renderBody, serializePayload, templateProblem } from "@trendgate/webhooks";

// Chat presets treat trend text as data, as the app's own cards do: a hostile trend name, summary or category cannot
// mention anyone, disguise a link or format the message, while the briefing link still arrives as a link. Custom
// templates keep plain JSON escaping.

const LINK = "https://trendgate.example/briefings/eyJhbGciOi.abc";
const NAME = "<!channel> <!here> <@U123> @everyone @here <https://evil.example|click> [click](https://evil.example) **b** ~~s~~ ||x|| `c`";
const SUMMARY = "# Heading\n> quote\n- item\n1. one\n<at>Alex</at> <!everyone> @Here <#C1> <t:0:R> [click](https://evil.example) _i_";
const CATEGORY = "<@U123|ceo>";

const body = (over: Record<string, unknown> = {}) => serializePayload({
  ...payloadFromEvent(exampleTrendEvent("trend.detected")), trend_name: NAME, summary: SUMMARY, category: CATEGORY, severity: "high", source_link: LINK, ...over,
});
const render = (format: "slack" | "discord" | "teams" | "custom", over?: Record<string, unknown>, template?: string) =>
  JSON.parse(renderBody({ format, ...(template ? { template } : {}) } as never, body(over), "trend.detected"));

test("Slack: trend text is escaped (&, <, >), so only the briefing link is a <…> tag", () => {
  const msg = render("slack");
  for (const text of [msg.text, msg.blocks[0].text.text] as string[]) {
    expect(text).not.toMatch(/<[!@#]/); // no <!channel>, <!here>, <@U123>, <#C1>
    expect(text).toContain("&lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt;");
    expect(text).toContain("&lt;https://evil.example|click&gt;");
  }
  expect(msg.text.match(/<[^>]*>/g)).toBeNull();
  // The one tag: the briefing link, so evil.example is never behind a label.
  expect(msg.blocks[0].text.text.match(/<[^>]*>/g)).toEqual([`<${LINK}|Open the briefing>`]);
  // A | or > in the URL cannot end it early and turn the rest into a label.
  expect(render("slack", { source_link: "https://trendgate.example/b/x|y>z" }).blocks[0].text.text.match(/<[^>]*>/g))
    .toEqual(["<https://trendgate.example/b/x%7Cy%3Ez|Open the briefing>"]);
});

test("Discord: markdown and mentions in trend text are escaped; the briefing link stays a bare link", () => {
  const msg = render("discord");
  expect(msg.allowed_mentions).toEqual({ parse: [] });
  const lines = (msg.content as string).split("\n");
  expect(lines.at(-1)).toBe(LINK);
  const text = lines.slice(0, -1).join("\n");
  expect(text).not.toMatch(/@(everyone|here)/i);
  expect(text).toContain("@\u200beveryone");
  expect(text).toContain("\\<@U123\\>");
  expect(text).toContain("\\[click\\]\\(https://evil.example\\)");
  // Once escaped pairs are taken out, no markup is left but the preset's own bold around the name...
  const bare = text.replace(/\\[\s\S]/g, "");
  expect(bare).not.toMatch(/[<>[\]()_~`|]/);
  expect(bare.match(/\*/g)).toHaveLength(4);
  expect(bare.split("\n")[0]).toMatch(/^\*\*[^*]*\*\* · /);
  // ...and no summary line starts a heading, quote or list.
  for (const line of text.split("\n").slice(1)) expect(line).not.toMatch(/^\s*([#>*+-]|\d+\.)/);
});

test("Teams: trend text goes in TextRuns, never markdown TextBlocks, and carries no mention entities", () => {
  const msg = render("teams");
  const card = msg.attachments[0].content;
  const json = JSON.stringify(card);
  expect(json).not.toContain('"TextBlock"');
  expect(json).not.toContain("msteams");
  const runs = card.body.flatMap((b: any) => { expect(b.type).toBe("RichTextBlock"); return b.inlines; });
  for (const r of runs) expect(r.type).toBe("TextRun");
  expect(runs.map((r: any) => r.text)).toEqual([`${NAME} · high`, SUMMARY]);
  expect(card.actions).toEqual([{ type: "Action.OpenUrl", title: "Open the briefing", url: LINK }]);
});

test("custom templates keep plain JSON escaping, and the presets still render for every event type", () => {
  expect(render("custom", undefined, '{"t": "{{trend_name}}", "s": "{{summary}}", "l": "{{source_link}}"}')).toEqual({ t: NAME, s: SUMMARY, l: LINK });
  for (const format of ["slack", "discord", "teams"] as const) {
    expect(templateProblem({ format }, [...TREND_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES])).toBeNull();
  }
});
