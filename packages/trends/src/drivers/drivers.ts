import { termsOf, topicWordsOf } from "./terms.ts";

// Why a topic is trending, from the signals already stored: the terms that co-occur with it more than usual (how many
// more of its posts carry them now than in the week before), where the mentions come from against where they usually
// do, the posts that weigh most, and the sentiment against its baseline.

export interface DriverSignal {
  source: string;
  count: number;
  sentiment: number | null;
  text: string | null;
  link: string | null;
  observedAt: Date;
}

export interface Drivers {
  /** Terms in at least MIN_POSTS posts of the window, at least MIN_LIFT times their usual share, the strongest first. */
  terms: { term: string; posts: number; lift: number }[];
  /** Share of the mentions by source now and usually (the week before). */
  sources: { source: string; share: number; usual_share: number }[];
  /** The posts that weigh most (by count) in the window. */
  top_posts: { source: string; count: number; link: string | null; text: string | null; observed_at: string }[];
  /** Mean sentiment (weighted by count) now and usually; null without scored mentions. */
  sentiment: { now: number; usual: number | null; shift: number | null } | null;
}

const MIN_POSTS = 2;
const MIN_LIFT = 2;
const MAX_TERMS = 5;
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

function shares(rows: DriverSignal[]) {
  const by = new Map<string, number>();
  let total = 0;
  for (const r of rows) { by.set(r.source, (by.get(r.source) ?? 0) + r.count); total += r.count; }
  return { by, total };
}

function meanSentiment(rows: DriverSignal[]): number | null {
  let sum = 0;
  let weight = 0;
  for (const r of rows) if (r.sentiment !== null) { const w = Math.max(1, r.count); sum += r.sentiment * w; weight += w; }
  return weight ? sum / weight : null;
}

/** Drivers of a topic named `topic` from its signals in the window (`recent`) and in the week before it (`baseline`). */
export function driversOf(topic: string, recent: DriverSignal[], baseline: DriverSignal[]): Drivers {
  const own = topicWordsOf(topic);
  const docs = (rows: DriverSignal[]) => {
    const df = new Map<string, number>();
    let n = 0;
    for (const r of rows) {
      if (!r.text) continue;
      n++;
      for (const t of termsOf(r.text, own)) df.set(t, (df.get(t) ?? 0) + 1);
    }
    return { df, n };
  };
  const now = docs(recent);
  const before = docs(baseline);
  // Lift of a term: its share of the window's posts over its share of the week before's, smoothed so that a term
  // never seen before is not infinitely new.
  const terms = [...now.df]
    .filter(([, posts]) => posts >= MIN_POSTS)
    .map(([term, posts]) => ({ term, posts, lift: ((posts + 0.5) / (now.n + 1)) / (((before.df.get(term) ?? 0) + 0.5) / (before.n + 1)) }))
    .filter((t) => t.lift >= MIN_LIFT)
    .sort((a, b) => b.posts * Math.log(b.lift) - a.posts * Math.log(a.lift) || a.term.localeCompare(b.term))
    .slice(0, MAX_TERMS)
    .map((t) => ({ ...t, lift: round(t.lift, 1) }));

  const s = shares(recent);
  const u = shares(baseline);
  const sources = [...new Set([...s.by.keys(), ...u.by.keys()])]
    .map((source) => ({ source, share: s.total ? round((s.by.get(source) ?? 0) / s.total) : 0, usual_share: u.total ? round((u.by.get(source) ?? 0) / u.total) : 0 }))
    .filter((x) => x.share > 0 || x.usual_share > 0)
    .sort((a, b) => b.share - a.share || b.usual_share - a.usual_share);

  const top_posts = [...recent].sort((a, b) => b.count - a.count || b.observedAt.getTime() - a.observedAt.getTime()).slice(0, 3)
    .map((r) => ({ source: r.source, count: r.count, link: r.link, text: r.text, observed_at: r.observedAt.toISOString() }));

  const sNow = meanSentiment(recent);
  const sUsual = meanSentiment(baseline);
  const sentiment = sNow === null ? null : { now: round(sNow), usual: sUsual === null ? null : round(sUsual), shift: sUsual === null ? null : round(sNow - sUsual) };
  return { terms, sources, top_posts, sentiment };
}

/** One sentence for texts (the summary, the chat card): the leading terms, a source that grew, a sentiment shift. */
export function driversText(d: Drivers): string {
  const parts: string[] = [];
  if (d.terms.length) parts.push(`with ${d.terms.slice(0, 3).map((t) => `"${t.term}" (${t.lift}x usual)`).join(", ")}`);
  const lead = d.sources[0];
  if (lead && d.sources.length > 1 && lead.share - lead.usual_share >= 0.2) parts.push(`${Math.round(lead.share * 100)}% from ${lead.source} (usually ${Math.round(lead.usual_share * 100)}%)`);
  if (d.sentiment?.shift !== null && d.sentiment && Math.abs(d.sentiment.shift!) >= 0.2) parts.push(`sentiment ${d.sentiment.shift! > 0 ? "up" : "down"} ${Math.abs(d.sentiment.shift!).toFixed(1)}`);
  return parts.length ? `Why: ${parts.join("; ")}.` : "";
}
