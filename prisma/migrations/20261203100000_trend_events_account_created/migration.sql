-- Backtests read an account's trend events in keyset pages by (created_at, id) (packages/db/src/trend-events.ts
-- trendEventsPage): each page starts where the last ended instead of sorting the whole history again.
-- CreateIndex
CREATE INDEX "trend_events_account_id_created_at_id_idx" ON "trend_events"("account_id", "created_at", "id");
