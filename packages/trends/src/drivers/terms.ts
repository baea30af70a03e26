// Words of a post as the drivers count them: lower-cased runs of letters and digits (any script), hashtags and
// @mentions kept whole (they are the entities people tag), at least three characters, common words and the topic's
// own words left out (every post of the topic has those).

const STOPWORDS = new Set(`a about above after again against all also am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how
i if in into is it its itself just let me more most my myself new no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours yourself yourselves get got one two via amp http
https www com just like really still even much many make made know see new says said rt`.split(/\s+/));

const TOKEN = /[#@]?[\p{L}\p{N}][\p{L}\p{N}_'’-]*/gu;

/** The distinct terms of a text, without the topic's own words. */
export function termsOf(text: string, topicWords: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(TOKEN)) {
    const t = m[0].replace(/['’-]+$/, "");
    const bare = t.replace(/^[#@]/, "");
    if (bare.length < 3 || STOPWORDS.has(bare) || topicWords.has(bare) || /^\d+$/.test(bare)) continue;
    out.add(t);
  }
  return out;
}

/** The topic's own words (its name's terms). */
export const topicWordsOf = (name: string) => new Set([...name.toLowerCase().matchAll(TOKEN)].map((m) => m[0].replace(/^[#@]/, "")));
