-- Issue 9: connections (browser OAuth), one-time OAuth states, the shared outbox, the operator queue.
-- CreateTable
CREATE TABLE "connections" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'connected',
    "credentials_sealed" TEXT NOT NULL,
    "token_expires_at" TIMESTAMP(3),
    "scopes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "external_account" JSONB NOT NULL DEFAULT '{}',
    "selection" JSONB NOT NULL DEFAULT '{}',
    "settings" JSONB NOT NULL DEFAULT '{}',
    "last_error" TEXT,
    "last_error_at" TIMESTAMP(3),
    "refresh_failures" INTEGER NOT NULL DEFAULT 0,
    "refresh_not_before" TIMESTAMP(3),
    "last_refreshed_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "connections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "oauth_states" (
    "state_hash" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "code_verifier_sealed" TEXT,
    "redirect_uri" TEXT NOT NULL,
    "return_url" TEXT,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_states_pkey" PRIMARY KEY ("state_hash")
);

-- CreateTable
CREATE TABLE "outbox_messages" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "connection_id" TEXT,
    "subject_id" TEXT,
    "dedup_key" TEXT,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMP(3) NOT NULL,
    "last_error" TEXT,
    "result" JSONB,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMP(3),

    CONSTRAINT "outbox_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_attempts" (
    "id" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "response_status" INTEGER,
    "error_class" TEXT,
    "error_message" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "next_retry_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbox_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operator_items" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "dedup_key" TEXT NOT NULL,
    "trend_id" TEXT,
    "state" TEXT NOT NULL DEFAULT 'open',
    "severity" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "velocity" DOUBLE PRECISION NOT NULL,
    "briefing_url" TEXT,
    "occurrences" INTEGER NOT NULL DEFAULT 1,
    "version" INTEGER NOT NULL DEFAULT 1,
    "snoozed_until" TIMESTAMP(3),
    "acknowledged_at" TIMESTAMP(3),
    "acknowledged_by" TEXT,
    "resolved_at" TIMESTAMP(3),
    "resolved_by" TEXT,
    "renotify_at" TIMESTAMP(3),
    "renotify_count" INTEGER NOT NULL DEFAULT 0,
    "chat_channel_id" TEXT,
    "chat_message_ts" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "operator_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operator_item_events" (
    "id" TEXT NOT NULL,
    "item_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "from_state" TEXT,
    "to_state" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "operator_item_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "connections_account_id_provider_key" ON "connections"("account_id", "provider");

-- CreateIndex
CREATE INDEX "oauth_states_expires_at_idx" ON "oauth_states"("expires_at");

-- CreateIndex
CREATE INDEX "outbox_messages_subject_id_idx" ON "outbox_messages"("subject_id");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_messages_queue_dedup_key_key" ON "outbox_messages"("queue", "dedup_key");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_attempts_message_id_attempt_key" ON "outbox_attempts"("message_id", "attempt");

-- CreateIndex
CREATE INDEX "operator_items_account_id_state_id_idx" ON "operator_items"("account_id", "state", "id");

-- CreateIndex
CREATE UNIQUE INDEX "operator_items_account_id_dedup_key_key" ON "operator_items"("account_id", "dedup_key");

-- CreateIndex
CREATE INDEX "operator_item_events_item_id_id_idx" ON "operator_item_events"("item_id", "id");

-- AddForeignKey
ALTER TABLE "connections" ADD CONSTRAINT "connections_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "operator_items" ADD CONSTRAINT "operator_items_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "operator_item_events" ADD CONSTRAINT "operator_item_events_item_id_fkey" FOREIGN KEY ("item_id") REFERENCES "operator_items"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Partial indexes for the sweepers and ticks: only rows still waiting for work are indexed.
CREATE INDEX "outbox_messages_due_idx" ON "outbox_messages" ("queue", "next_attempt_at") WHERE "status" = 'pending';
CREATE INDEX "operator_items_renotify_idx" ON "operator_items" ("renotify_at") WHERE "state" = 'open' AND "renotify_at" IS NOT NULL;
CREATE INDEX "operator_items_snoozed_idx" ON "operator_items" ("snoozed_until") WHERE "state" = 'snoozed';
