-- Outbox messages a peer took whose run is not confirmed yet (workflow pushes: result.confirmation = 'pending'), for
-- the confirmation pass (packages/db unconfirmedOutboxMessages); confirmed ones leave the index.
CREATE INDEX "outbox_messages_unconfirmed_idx" ON "outbox_messages" ("queue", "completed_at") WHERE "result"->>'confirmation' = 'pending';
