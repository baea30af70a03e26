import { applyGuardrails, blocklistedTerm, canonicalJson, DEFAULT_SAFETY, stateHash, type PlanTrend, type ProposedChange, type SafetySettings } from "@trendgate/ads";

// strict_safety: each rule refuses what it should, with a reason naming the rule, and lets the
// rest through. A plan's stale check hashes the same state the same whatever the field order.

const trend = (over: Partial<PlanTrend> = {}): PlanTrend => ({ id: "trd_1", name: "AI agents", category: "tech/ai", severity: "high", sentiment: 0.4, ...over });
const add = (text: string, over: Partial<ProposedChange> = {}): ProposedChange => ({ entity_id: "ag_1", field: "keywords", op: "add", item: { text }, trend_id: "trd_1", ...over });
const run = (changes: ProposedChange[], trends: PlanTrend[] = [trend()], s: Partial<SafetySettings> = {}) =>
  applyGuardrails(changes, new Map(trends.map((t) => [t.id, t])), { ...DEFAULT_SAFETY, ...s });
const rules = (r: ReturnType<typeof run>) => r.refused.map((x) => x.rule);

test("additions from a severe, positive, safe trend pass", () => {
  const r = run([add("ai agents"), add("agent frameworks")]);
  expect(r.allowed.map((c) => c.item.text)).toEqual(["ai agents", "agent frameworks"]);
  expect(r.refused).toEqual([]);
});

test("strict_safety refuses removals and replacements; off, it allows removing only what this service added", () => {
  const removeOurs = add("old trend", { op: "remove", added_by_us: true, trend_id: null });
  const removeTheirs = add("brand term", { op: "remove", added_by_us: false, trend_id: null });
  const replace = add("x", { op: "replace", added_by_us: true });
  const strict = run([removeOurs, removeTheirs, replace]);
  expect(strict.allowed).toEqual([]);
  expect(rules(strict)).toEqual(["additions_only", "additions_only", "additions_only"]);
  expect(strict.refused[0].reason).toMatch(/additions only/);
  const relaxed = run([removeOurs, removeTheirs, replace], [trend()], { strict: false });
  expect(relaxed.allowed).toEqual([removeOurs]);
  expect(rules(relaxed)).toEqual(["not_added_by_us", "not_added_by_us"]);
});

test("budget, bid and schedule fields are refused whatever strict_safety says", () => {
  for (const strict of [true, false]) {
    const r = run([add("1000", { field: "daily_budget" }), add("2", { field: "bid_amount" }), add("x", { field: "ad_schedule" }), add("ok")], [trend()], { strict });
    expect(rules(r)).toEqual(["no_budget_fields", "no_budget_fields", "no_budget_fields"]);
    expect(r.allowed.map((c) => c.item.text)).toEqual(["ok"]);
  }
});

test("trends below the minimum severity, with negative sentiment, or about a sensitive topic drive nothing", () => {
  const trends = [
    trend({ id: "low", severity: "low" }),
    trend({ id: "neg", sentiment: -0.3 }),
    trend({ id: "war", name: "Trade war tariffs" }),
    trend({ id: "cat", name: "Quiet topic", category: "news/disaster" }),
    trend({ id: "unknown-sentiment", sentiment: null }),
  ];
  const r = run(trends.map((t) => add(`kw ${t.id}`, { trend_id: t.id })).concat(add("orphan", { trend_id: "gone" })), trends);
  expect(r.refused.map((x) => [x.change.trend_id, x.rule])).toEqual([
    ["low", "below_min_severity"], ["neg", "negative_sentiment"], ["war", "blocklisted_topic"], ["cat", "blocklisted_topic"], ["gone", "unknown_trend"],
  ]);
  expect(r.refused[2].reason).toContain('"war"');
  expect(r.allowed.map((c) => c.trend_id)).toEqual(["unknown-sentiment"]);
  expect(run([add("kw", { trend_id: "low" })], trends, { minSeverity: "low" }).allowed).toHaveLength(1);
});

test("an added item that names a sensitive topic is refused even from a safe trend; the blocklist is per account", () => {
  const r = run([add("gun accessories"), add("gunmetal phone case")]);
  expect(rules(r)).toEqual(["blocklisted_topic"]);
  expect(r.allowed.map((c) => c.item.text)).toEqual(["gunmetal phone case"]); // whole words only
  expect(run([add("gun accessories")], [trend()], { blocklist: ["casino"] }).allowed).toHaveLength(1);
  expect(run([add("Online Casino bonus")], [trend()], { blocklist: ["casino"] }).refused[0].rule).toBe("blocklisted_topic");
  expect(blocklistedTerm("Über-Krieg", ["krieg"])).toBe("krieg");
});

test("caps: per entity and per plan, counting allowed changes only, in the planner's order", () => {
  const many = Array.from({ length: 5 }, (_, i) => add(`kw ${i}`));
  const perEntity = run(many, [trend()], { maxChangesPerEntity: 3 });
  expect(perEntity.allowed.map((c) => c.item.text)).toEqual(["kw 0", "kw 1", "kw 2"]);
  expect(rules(perEntity)).toEqual(["max_changes_per_entity", "max_changes_per_entity"]);
  const spread = Array.from({ length: 6 }, (_, i) => add(`kw ${i}`, { entity_id: `ag_${i % 3}` }));
  const perRun = run([add("budget", { field: "lifetime_budget" }), ...spread], [trend()], { maxChangesPerRun: 4 });
  expect(perRun.allowed).toHaveLength(4);
  expect(rules(perRun)).toEqual(["no_budget_fields", "max_changes_per_run", "max_changes_per_run"]);
});

test("the state hash ignores key order and sees any change of value or array order", () => {
  const a = { ad_group: "1", keywords: [{ text: "a", match_type: "BROAD" }, { text: "b", match_type: "EXACT" }] };
  const sameReordered = { keywords: [{ match_type: "BROAD", text: "a" }, { match_type: "EXACT", text: "b" }], ad_group: "1" };
  expect(canonicalJson(a)).toBe(canonicalJson(sameReordered));
  expect(stateHash(a)).toBe(stateHash(sameReordered));
  expect(stateHash(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(stateHash({ ...a, keywords: [...a.keywords].reverse() })).not.toBe(stateHash(a));
  expect(stateHash({ ...a, ad_group: "2" })).not.toBe(stateHash(a));
  expect(canonicalJson({ x: undefined, y: [undefined, 1] })).toBe('{"y":[null,1]}');
});
