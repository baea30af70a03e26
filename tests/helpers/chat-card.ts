import type { OperatorCard } from "../../packages/connectors/chat/src/kind.ts";

/** An operator card as the chat connectors render it: an open high item about a trend-less topic, unless `over` says otherwise. */
export const operatorCardFixture = (over: Partial<OperatorCard> = {}): OperatorCard => ({
  itemId: "op_01kaq3m2b4c5d6e7f8g9h0jkmn",
  version: 1,
  state: "open",
  severity: "high",
  title: "Heat pumps",
  category: "energy/heating",
  summary: "Mentions of heat pumps tripled in the last hour.",
  velocity: 3.25,
  briefingUrl: "https://app.trendgate.example.com/trends/tr_01kaq3m2b4c5d6e7f8g9h0jkmn",
  occurrences: 1,
  acknowledgedBy: null,
  resolvedBy: null,
  snoozedUntil: null,
  mention: null,
  judgeable: false,
  ...over,
});
