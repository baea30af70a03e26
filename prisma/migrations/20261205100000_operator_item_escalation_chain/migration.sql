-- The escalation chain an operator item opened with (the matched rule's id and its steps), so saving the routing rules
-- later does not change or stop a chain in progress. Items opened before have none and read their route's live steps.
ALTER TABLE "operator_items" ADD COLUMN "escalation_chain" JSONB;
