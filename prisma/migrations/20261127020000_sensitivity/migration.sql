-- Per-subscription sensitivity, trigger window and recovery window; what trends keep for the two windows.
ALTER TABLE "webhook_subscriptions" ADD COLUMN "sensitivity" TEXT NOT NULL DEFAULT 'high';
ALTER TABLE "webhook_subscriptions" ADD COLUMN "trigger_window_minutes" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "webhook_subscriptions" ADD COLUMN "recovery_window_minutes" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "trends" ADD COLUMN "last_anomalous_at" TIMESTAMP(3);
ALTER TABLE "trends" ADD COLUMN "ended_at" TIMESTAMP(3);

CREATE TABLE "held_firings" (
    "subscription_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "trend_id" TEXT NOT NULL,
    "window_minutes" INTEGER NOT NULL,
    "held_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "due_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "held_firings_pkey" PRIMARY KEY ("subscription_id", "event_id")
);
CREATE INDEX "held_firings_due_at_idx" ON "held_firings"("due_at");
ALTER TABLE "held_firings" ADD CONSTRAINT "held_firings_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
