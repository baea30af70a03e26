import { computePlan, DEFAULT_SAFETY, emptyReasonOf, stateHash, hashablePrior, type PlanInput, type PlanTrend } from "@trendgate/ads";
import type { EntityTargeting, TargetingItem } from "@trendgate/connector-ads";

// A preview's plan: each mapped entity gets the items its category's trends resolve to, less
// what it already targets, most severe trends first, through the guardrails; the diff shows before and after with
// the trend behind each change, and the prior-state hash changes whenever the targets do.

const kw = (text: string): TargetingItem => ({ key: `${text}|PHRASE`, text, match_type: "PHRASE" });
const trend = (id: string, name: string, over: Partial<PlanTrend> = {}): PlanTrend => ({ id, name, category: "tech/ai", severity: "high", sentiment: 0.3, ...over });

function input(over: Partial<PlanInput> = {}): PlanInput {
  return {
    trends: [trend("t_med", "robot vacuums", { severity: "medium" }), trend("t_crit", "ai agents", { severity: "critical" })],
    entities: [{ id: "ag_1", name: "AI", field: "keywords" }, { id: "ag_2", name: "Home", field: "keywords" }],
    prior: [{ entity_id: "ag_1", field: "keywords", items: [kw("ai agents")] }, { entity_id: "ag_2", field: "keywords", items: [] }],
    resolved: new Map([["keywords", new Map([["ai agents", [kw("ai agents")]], ["robot vacuums", [kw("robot vacuums")]]])]]),
    safety: DEFAULT_SAFETY,
    ...over,
  };
}

test("adds what each entity lacks, most severe trend first, and shows before/after with the trend behind it", () => {
  const plan = computePlan(input());
  expect(plan.changes.map((c) => [c.entity_id, c.item.text, c.trend_id])).toEqual([
    ["ag_1", "robot vacuums", "t_med"], // ag_1 already targets "ai agents"
    ["ag_2", "ai agents", "t_crit"], ["ag_2", "robot vacuums", "t_med"],
  ]);
  expect(plan.diff).toEqual([
    { entity_id: "ag_1", entity_name: "AI", field: "keywords", before: ["ai agents"], after: ["ai agents", "robot vacuums"],
      changes: [{ change_id: plan.changes[0].id, op: "add", item: "robot vacuums", trend: { id: "t_med", name: "robot vacuums" } }], empty_reason: null, empty_detail: null },
    { entity_id: "ag_2", entity_name: "Home", field: "keywords", before: [], after: ["ai agents", "robot vacuums"],
      changes: plan.changes.slice(1).map((c) => ({ change_id: c.id, op: "add", item: c.item.text, trend: { id: c.trend_id!, name: c.item.text } })),
      empty_reason: null, empty_detail: null },
  ]);
  expect(plan.refused).toEqual([]);
});

test("refused changes stay out of the plan and out of the diff's after, each with its reason", () => {
  const plan = computePlan(input({
    trends: [trend("t_war", "drone war"), trend("t_low", "smart rings", { severity: "low" }), trend("t_ok", "ai agents")],
    resolved: new Map([["keywords", new Map([["drone war", [kw("drone war")]], ["smart rings", [kw("smart rings")]], ["ai agents", [kw("ai agents")]]])]]),
  }));
  expect(plan.changes.map((c) => [c.entity_id, c.item.text])).toEqual([["ag_2", "ai agents"]]);
  expect(plan.refused.map((r) => [r.entity_id, r.item, r.rule])).toEqual([
    ["ag_1", "drone war", "blocklisted_topic"], ["ag_1", "smart rings", "below_min_severity"],
    ["ag_2", "drone war", "blocklisted_topic"], ["ag_2", "smart rings", "below_min_severity"],
  ]);
  expect(plan.diff[1].after).toEqual(["ai agents"]);
  // ag_1 gets nothing: what it lacks was all refused (its entity says so; the plan, having changes, does not).
  expect([plan.diff[0].empty_reason, plan.diff[0].empty_detail]).toEqual(["all_refused", '"AI" (ag_1): all 2 of its changes were refused (see refused)']);
  expect(emptyReasonOf(plan.changes, plan.diff)).toEqual({ empty_reason: null, empty_detail: null });
});

test("an empty plan says why: nothing found for an interest field names the terms searched; the upstream reason wins", () => {
  const plan = computePlan(input({
    entities: [{ id: "ag_1", name: "AI", field: "keywords" }, { id: "as_9", field: "interests" }],
    prior: [{ entity_id: "ag_1", field: "keywords", items: [kw("ai agents"), kw("robot vacuums")] }, { entity_id: "as_9", field: "interests", items: [] }],
    resolved: new Map([["keywords", new Map([["ai agents", [kw("ai agents")]], ["robot vacuums", [kw("robot vacuums")]]])], ["interests", new Map()]]),
    lookup: { interests: "the interest search" },
  }));
  expect(plan.changes).toEqual([]);
  expect(plan.diff.map((d) => d.empty_reason)).toEqual(["already_targeted", "no_interest_matched"]);
  expect(emptyReasonOf(plan.changes, plan.diff)).toEqual({
    empty_reason: "no_interest_matched", empty_detail: 'no interest matched the trend terms searched in the interest search: "ai agents", "robot vacuums"',
  });
  expect(emptyReasonOf([], [{ empty_reason: null }])).toEqual({ empty_reason: null, empty_detail: null }); // rows from before reasons were kept
  expect(computePlan(input({ trends: [], category: "tech" })).diff.map((d) => d.empty_reason)).toEqual(["no_rising_trends", "no_rising_trends"]);
});

test("the per-entity cap keeps the most severe trends' items", () => {
  const trends = ["a", "b", "c"].map((x, i) => trend(`t_${x}`, `topic ${x}`, { severity: (["low", "high", "critical"] as const)[i] }));
  const plan = computePlan(input({
    trends, entities: [{ id: "ag_2", field: "keywords" }], safety: { ...DEFAULT_SAFETY, minSeverity: "low", maxChangesPerEntity: 2 },
    resolved: new Map([["keywords", new Map(trends.map((t) => [t.name, [kw(t.name)]]))]]),
  }));
  expect(plan.changes.map((c) => c.item.text)).toEqual(["topic c", "topic b"]);
  expect(plan.refused.map((r) => [r.item, r.rule])).toEqual([["topic a", "max_changes_per_entity"]]);
});

test("the prior-state hash follows the targets, not the order they were read in", () => {
  const a = computePlan(input());
  const reordered = computePlan(input({ prior: [...input().prior].reverse() }));
  expect(reordered.prior_state_hash).toBe(a.prior_state_hash);
  const changed: EntityTargeting[] = [{ entity_id: "ag_1", field: "keywords", items: [kw("ai agents"), kw("someone else's keyword")] }, input().prior[1]];
  expect(computePlan(input({ prior: changed })).prior_state_hash).not.toBe(a.prior_state_hash);
  expect(a.prior_state_hash).toBe(stateHash(hashablePrior(input().prior)));
});

test("entities mapped by different fields each get their own field's items (a keyword never lands in interests)", () => {
  const interest = (id: string, text: string): TargetingItem => ({ key: id, id, text });
  const plan = computePlan(input({
    entities: [{ id: "ag_1", field: "keywords" }, { id: "ag_2", field: "interests" }],
    prior: [{ entity_id: "ag_1", field: "keywords", items: [] }, { entity_id: "ag_2", field: "interests", items: [] }],
    resolved: new Map([
      ["keywords", new Map([["ai agents", [kw("ai agents")]]])],
      ["interests", new Map([["ai agents", [interest("9001", "Artificial intelligence")]]])],
    ]),
  }));
  expect(plan.changes.map((c) => [c.entity_id, c.field, c.item.key])).toEqual([["ag_1", "keywords", "ai agents|PHRASE"], ["ag_2", "interests", "9001"]]);
});
