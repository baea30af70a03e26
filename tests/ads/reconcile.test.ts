import { reconcile } from "@trendgate/ads";
import type { EntityTargeting, TargetingChange } from "@trendgate/connector-ads";

// Before writing, an apply compares the targets as read now with the plan: as previewed ->
// everything; already the plan's after -> nothing; prior plus some of the plan's changes (an attempt cut short) ->
// the rest; anything else -> stale. This is what makes "the same apply twice -> applied once" hold without any
// idempotency key at the provider.

const item = (k: string) => ({ key: k, text: k });
const t = (entity: string, keys: string[]): EntityTargeting => ({ entity_id: entity, field: "keywords", items: keys.map(item) });
const add = (id: string, entity: string, k: string): TargetingChange => ({ id, entity_id: entity, field: "keywords", op: "add", item: item(k), trend_id: "t" });
const remove = (id: string, entity: string, k: string): TargetingChange => ({ ...add(id, entity, k), op: "remove" });

const prior = [t("a", ["x"]), t("b", ["old"])];
const changes = [add("c1", "a", "y"), add("c2", "b", "z"), remove("c3", "b", "old")];

test("as previewed: every change remains", () => {
  expect(reconcile(changes, prior, [t("b", ["old"]), t("a", ["x"])])).toEqual({ verdict: "fresh", remaining: changes });
});

test("the plan's after: already applied", () => {
  expect(reconcile(changes, prior, [t("a", ["x", "y"]), t("b", ["z"])])).toEqual({ verdict: "already_applied" });
});

test("prior plus part of the plan: the rest remains", () => {
  expect(reconcile(changes, prior, [t("a", ["x", "y"]), t("b", ["old"])])).toEqual({ verdict: "partially_applied", remaining: [changes[1], changes[2]] });
  expect(reconcile(changes, prior, [t("a", ["x"]), t("b", [])])).toEqual({ verdict: "partially_applied", remaining: [changes[0], changes[1]] });
});

test("anything else is stale: an item the plan does not touch appeared or went away", () => {
  expect(reconcile(changes, prior, [t("a", ["x", "someone"]), t("b", ["old"])])).toMatchObject({ verdict: "stale", reason: expect.stringContaining("a") });
  expect(reconcile(changes, prior, [t("a", []), t("b", ["old"])])).toMatchObject({ verdict: "stale" });
  expect(reconcile(changes, prior, [t("b", ["old"])])).toMatchObject({ verdict: "stale" }); // a's "x" is gone: not the plan's doing
  expect(reconcile([add("c1", "a", "x2")], [t("a", ["x"])], [t("a", ["x2"])])).toMatchObject({ verdict: "stale" }); // added, but "x" went away
});
