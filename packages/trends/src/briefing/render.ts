import crypto from "node:crypto";
import { nextStepsOf, projectedCount, summaryOf } from "../engine/narrative.ts";
import type { BriefingData } from "./load.ts";

// The briefing page: one self-contained HTML document. No scripts, no external assets, one <style> element allowed
// by its hash in the CSP (the chart is inline SVG drawn with presentation attributes, which the CSP does not
// govern). Every piece of text is escaped: topic names, sources and links come from callers' signals.

const STYLE = [
  "body{font:16px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1f2328;background:#fff}",
  "h1{font-size:1.6rem;margin:.2rem 0 .4rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}",
  ".kicker{margin:0;color:#59636e;font-size:.85rem;text-transform:uppercase;letter-spacing:.05em}",
  ".tags span{display:inline-block;margin:0 .3rem .3rem 0;padding:0 .5rem;border:1px solid #d1d9e0;border-radius:1rem;font-size:.85rem}",
  ".sev-high,.sev-critical{background:#ffebe9;border-color:#ff8182!important}.sev-medium{background:#fff8c5}",
  ".summary{font-size:1.05rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}dt{color:#59636e}dd{margin:0}",
  "svg{display:block;max-width:100%;height:auto;border:1px solid #d1d9e0;border-radius:6px}figure{margin:0}figcaption{color:#59636e;font-size:.85rem}",
  "ol{padding-left:1.4rem}li{margin:.3rem 0;overflow-wrap:anywhere}.meta{color:#59636e;font-size:.85rem}",
  "footer{margin-top:2rem;padding-top:.8rem;border-top:1px solid #d1d9e0;color:#59636e;font-size:.85rem}",
  ".err h1{color:#cf222e}",
].join("");
const STYLE_HASH = crypto.createHash("sha256").update(STYLE).digest("base64");

/** Headers of every briefing answer (the page and its error pages): not cached, not indexed, no Referer to the posts it links. */
export const BRIEFING_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "private, no-store",
  Pragma: "no-cache",
  "X-Robots-Tag": "noindex, nofollow, noarchive",
  "X-Frame-Options": "DENY",
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const num = (n: number) => (Math.abs(n) >= 10 ? String(Math.round(n)) : String(Math.round(n * 10) / 10));
const signed = (n: number) => (n > 0 ? `+${num(n)}` : num(n));
const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
const time = (d: Date) => `<time datetime="${d.toISOString()}">${utc(d)}</time>`;

/** The URL when it is http(s), else null: a link of another scheme (javascript:, data:) is never rendered. */
export function safeHttpUrl(s: string): string | null {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

function sentimentText(s: number | null): string {
  if (s === null) return "No sentiment in the assessed bucket.";
  const label = s >= 0.25 ? "positive" : s <= -0.25 ? "negative" : "neutral";
  return `${label[0].toUpperCase()}${label.slice(1)} (${s.toFixed(2)} on a scale from -1 to 1, in the assessed bucket).`;
}

/** Mentions per bucket as a line, with the expected rate dashed and the assessed bucket marked. */
function chart(d: BriefingData): string {
  const W = 640, H = 220, L = 44, R = 12, T = 14, B = 30;
  const counts = d.series.map((p) => p.count);
  const max = Math.max(1, d.trend.baseline, ...counts) * 1.1;
  const x = (i: number) => L + (d.series.length > 1 ? (i * (W - L - R)) / (d.series.length - 1) : 0);
  const y = (v: number) => T + (H - T - B) * (1 - v / max);
  const f = (n: number) => n.toFixed(1);
  const line = counts.map((c, i) => `${f(x(i))},${f(y(c))}`).join(" ");
  const last = counts.length - 1;
  const first = d.series[0]?.start;
  const end = d.series[last]?.start;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-labelledby="chart-title">` +
    `<title id="chart-title">Mentions per bucket of ${escapeHtml(d.trend.name)}</title>` +
    `<line x1="${L}" y1="${f(y(0))}" x2="${W - R}" y2="${f(y(0))}" stroke="#d1d9e0"/>` +
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${f(y(0))}" stroke="#d1d9e0"/>` +
    `<text x="${L - 6}" y="${T + 10}" text-anchor="end" font-size="11" fill="#59636e">${num(max)}</text>` +
    `<text x="${L - 6}" y="${f(y(0))}" text-anchor="end" font-size="11" fill="#59636e">0</text>` +
    `<line x1="${L}" y1="${f(y(d.trend.baseline))}" x2="${W - R}" y2="${f(y(d.trend.baseline))}" stroke="#9a6700" stroke-width="1.5" stroke-dasharray="6 4"><title>expected: ${num(d.trend.baseline)} per bucket</title></line>` +
    `<polyline points="${line}" fill="none" stroke="#0969da" stroke-width="2" stroke-linejoin="round"/>` +
    (last >= 0 ? `<circle cx="${f(x(last))}" cy="${f(y(counts[last]))}" r="4" fill="#cf222e"><title>assessed bucket: ${num(counts[last])}</title></circle>` : "") +
    (first && end ? `<text x="${L}" y="${H - 8}" font-size="11" fill="#59636e">${utc(first)}</text>` +
      `<text x="${W - R}" y="${H - 8}" text-anchor="end" font-size="11" fill="#59636e">${utc(end)}</text>` : "") +
    `</svg>`;
}

function examples(d: BriefingData): string {
  const items = d.examples.flatMap((e) => {
    const href = safeHttpUrl(e.link);
    if (!href) return [];
    const u = new URL(href);
    const label = `${u.host}${u.pathname === "/" ? "" : u.pathname}`;
    const shown = label.length > 90 ? `${label.slice(0, 89)}…` : label;
    return [`<li><a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">${escapeHtml(shown)}</a>` +
      `<br><span class="meta">${escapeHtml(e.source)} · ${num(e.count)} ${e.count === 1 ? "mention" : "mentions"} · ${time(e.observedAt)}</span></li>`];
  });
  return items.length ? `<ol>${items.join("")}</ol>` : "<p>No linked posts of this topic in the charted window.</p>";
}

/** Why it is trending: the terms that co-occur more than usual, where the mentions come from, the sentiment shift. */
function drivers(d: BriefingData): string {
  const v = d.drivers;
  const terms = v.terms.length
    ? `<ul>${v.terms.map((t) => `<li><strong>${escapeHtml(t.term)}</strong> in ${num(t.posts)} posts, ${t.lift}x its usual share</li>`).join("")}</ul>`
    : "<p>No term stands out from the topic's usual posts.</p>";
  const sources = v.sources.length
    ? `<ul>${v.sources.slice(0, 5).map((x) => `<li>${escapeHtml(x.source)}: ${Math.round(x.share * 100)}% of mentions (usually ${Math.round(x.usual_share * 100)}%)</li>`).join("")}</ul>`
    : "";
  const mood = v.sentiment && v.sentiment.shift !== null
    ? `<p>Sentiment ${v.sentiment.now.toFixed(2)} against ${v.sentiment.usual!.toFixed(2)} usually (${v.sentiment.shift >= 0 ? "+" : ""}${v.sentiment.shift.toFixed(2)}).</p>` : "";
  return `<h3>Co-occurring terms</h3>${terms}${sources ? `<h3>Sources</h3>${sources}` : ""}${mood}`;
}

/** The briefing page of `d`, generated at `generatedAt`, from a link that works until `expiresAt`. */
export function renderBriefing(d: BriefingData, o: { generatedAt: Date; expiresAt: Date }): string {
  const t = d.trend;
  const perHour = (n: number) => (n * 3600) / d.bucketSeconds;
  const facts = {
    name: t.name, category: t.category, severity: t.severity, stage: t.stage, velocity: t.velocity, current: t.current, baseline: t.baseline,
    observed: t.observed, ended: t.status === "ended",
  };
  // A bucket in progress: its count so far and the rate it comes to with the rest as usual (as detection projects
  // it), never the count scaled to the bucket: five minutes' clump scaled to an hour told several times the rate.
  const projected = projectedCount(t.current, t.observed, t.baseline);
  const minutes = Math.round((t.observed * d.bucketSeconds) / 60);
  const ratio = t.baseline > 0 ? `${num(projected / t.baseline)}×` : "no usual rate yet";
  const bucket = d.bucketSeconds === 3600 ? "hour" : `${num(d.bucketSeconds / 60)} minutes`;
  const dl = (rows: [string, string][]) => `<dl>${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join("")}</dl>`;
  const e = escapeHtml;
  return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">" +
    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">" +
    `<meta name="robots" content="noindex,nofollow"><title>Trend briefing: ${e(t.name)}</title><style>${STYLE}</style></head><body>` +
    `<header><p class="kicker">Trend briefing</p><h1>${e(t.name)}</h1>` +
    `<p class="tags"><span>${e(t.category)}</span><span class="sev-${e(t.severity)}">severity ${e(t.severity)}</span><span>stage ${e(t.stage)}</span><span>${e(t.status)}</span></p></header>` +
    `<p class="summary">${e(summaryOf(facts, d.bucketSeconds))}</p>` +
    `<section><h2>What rose</h2>${dl([
      ["Now", t.observed < 1 ? `${num(t.current)} mentions in the first ${minutes} minutes (${num(perHour(projected))} mentions/h if the rest of the ${bucket} runs as usual)` : `${num(perHour(t.current))} mentions/h`],
      ["Expected", `${num(perHour(t.baseline))} mentions/h`],
      ["Ratio", e(ratio)],
      ["Anomaly score", num(t.anomalyScore)],
    ])}</section>` +
    `<section><h2>How fast</h2>${dl([
      ["Velocity", `${signed(t.velocity)} mentions/h above the expected rate`],
      ["Acceleration", `${signed(t.acceleration)} mentions/h since the bucket before`],
      ["Peak velocity", `${signed(t.peakVelocity)} mentions/h`],
    ])}</section>` +
    `<section><h2>Since when</h2>${dl([["Detected", time(t.detectedAt)], ["Last assessed bucket", time(t.bucketStart)]])}</section>` +
    `<section><h2>Mentions per ${e(bucket)}</h2><figure>${chart(d)}<figcaption>The last ${d.series.length} buckets up to the assessed one (red dot); dashed: the expected rate.</figcaption></figure></section>` +
    `<section><h2>Why it is trending</h2>${drivers(d)}</section>` +
    `<section><h2>Sentiment</h2><p>${e(sentimentText(t.sentiment))}</p></section>` +
    `<section><h2>Example posts</h2>${examples(d)}</section>` +
    `<section><h2>Recommended next steps</h2><ol>${nextStepsOf(facts).map((s) => `<li>${e(s)}</li>`).join("")}</ol></section>` +
    `<footer>Generated ${time(o.generatedAt)}. This link works until ${time(o.expiresAt)}, unless the account revokes its briefing links. ` +
    `API users: the same trend as JSON at <code>/api/trends/${e(t.id)}</code>.</footer></body></html>`;
}

/** The page for a link that shows nothing: 404 (unknown, malformed or revoked: not told apart) or 410 (expired). */
export function renderBriefingError(status: 404 | 410): string {
  const [title, line] = status === 410
    ? ["This briefing link has expired", "Briefing links work for a limited time. The trend is still in Trendgate: ask for a new link, or read it through the API."]
    : ["This briefing is not available", "The link is wrong, incomplete, or no longer valid."];
  return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">" +
    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">" +
    `<meta name="robots" content="noindex,nofollow"><title>${title}</title><style>${STYLE}</style></head>` +
    `<body class="err"><h1>${title}</h1><p>${line}</p></body></html>`;
}
