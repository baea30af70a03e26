import type { AsyncApiDocument } from "./asyncapi.ts";

// The event catalog as a page people read (GET /docs/events): each event type with what it means, where it is
// delivered, its payload's JSON Schema and an example, all taken from the AsyncAPI document. No script, no styles
// from elsewhere.

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const pre = (v: unknown) => `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;

/** Follows "#/components/..." references, nested ones too (an operational event's typed data), a few levels deep. */
function deref(doc: AsyncApiDocument, v: unknown, depth = 0): unknown {
  if (!v || typeof v !== "object" || depth > 4) return v;
  if (Array.isArray(v)) return v.map((x) => deref(doc, x, depth));
  const ref = (v as { $ref?: unknown }).$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) return deref(doc, ref.slice(2).split("/").reduce<any>((o, k) => o?.[k], doc), depth + 1);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deref(doc, x, depth)]));
}

export function eventsPage(doc: AsyncApiDocument): string {
  const byType = new Map<string, { channel: string; key: string; m: any }[]>();
  for (const [channelName, channel] of Object.entries(doc.channels)) {
    for (const key of Object.keys(channel.messages)) {
      const m = (doc.components.messages as Record<string, any>)[key];
      (byType.get(m.name) ?? byType.set(m.name, []).get(m.name)!).push({ channel: channelName, key, m });
    }
  }
  const sections = [...byType].map(([type, on]) => {
    const first = on[0].m;
    const parts = on.map(({ channel, m }) => {
      const c = (doc.channels as Record<string, any>)[channel];
      return `<h3>${esc(c.title)}</h3><p>${esc(c.description)}</p>` +
        (m.headers ? `<h4>Headers</h4>${pre(m.headers)}` : "") +
        `<h4>Payload schema</h4>${pre(deref(doc, m.payload))}<h4>Example</h4>${pre(m.examples?.[0] ?? null)}`;
    }).join("");
    return `<section id="${esc(type)}"><h2><code>${esc(type)}</code></h2><p>${esc(first.summary)}</p>${parts}</section>`;
  }).join("\n");
  const toc = [...byType.keys()].map((t) => `<li><a href="#${esc(t)}"><code>${esc(t)}</code></a></li>`).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)}</title></head><body>` +
    `<h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1><p>${esc(doc.info.description)}</p>` +
    `<p>Machine-readable: <a href="/asyncapi.json">/asyncapi.json</a> (AsyncAPI 3.0). Shared schemas are under components.schemas there.</p>` +
    `<ul>${toc}</ul>\n${sections}</body></html>`;
}
