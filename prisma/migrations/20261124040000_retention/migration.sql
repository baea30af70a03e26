-- Retention (issue 15): indexes for the batched deletes of old rows (packages/db/src/retention.ts).
-- CreateIndex
CREATE INDEX "account_events_created_at_idx" ON "account_events"("created_at");

-- CreateIndex
CREATE INDEX "outbox_attempts_created_at_idx" ON "outbox_attempts"("created_at");

-- CreateIndex
CREATE INDEX "outbox_messages_created_at_idx" ON "outbox_messages"("created_at");

-- CreateIndex
CREATE INDEX "topic_buckets_bucket_start_idx" ON "topic_buckets"("bucket_start");

-- CreateIndex
CREATE INDEX "webhook_deliveries_created_at_idx" ON "webhook_deliveries"("created_at");

-- CreateIndex
CREATE INDEX "webhook_executions_created_at_idx" ON "webhook_executions"("created_at");

-- CreateIndex (written by hand: prisma took the partial trend_events_undispatched_idx for this one and renamed it)
CREATE INDEX "trend_events_created_at_idx" ON "trend_events"("created_at");

