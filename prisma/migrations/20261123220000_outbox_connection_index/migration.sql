-- A disconnect cancels the connection's pending outbox messages (packages/db cancelConnectionOutboxMessages).
CREATE INDEX "outbox_messages_connection_id_idx" ON "outbox_messages"("connection_id");
