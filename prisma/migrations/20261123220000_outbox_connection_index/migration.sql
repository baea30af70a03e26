-- A disconnect cancels the connection's pending outbox messages (packages/db cancelConnectionOutboxMessages).
CREATE INDEX "outbox_messages_connection_id_idx" ON "outbox_messages"("connection_id");

-- Conversion events now batch on subject_id alone (pixel, plus the test id for test events): pending test events
-- queued before keep apart from real ones.
UPDATE "outbox_messages" SET "subject_id" = "subject_id" || '|test:' || ("payload"->>'test_id')
 WHERE "queue" = 'conversion-events' AND "status" = 'pending' AND coalesce("payload"->>'test_id', '') <> '' AND "subject_id" NOT LIKE '%|test:%';
