-- Operational events are pushed to the webhook subscriptions that list them: pushed_at marks an account event the
-- sweeper has fanned out. Events recorded before this are not pushed.
ALTER TABLE "account_events" ADD COLUMN "pushed_at" TIMESTAMP(3);
UPDATE "account_events" SET "pushed_at" = CURRENT_TIMESTAMP;
CREATE INDEX "account_events_unpushed_idx" ON "account_events" ("id") WHERE "pushed_at" IS NULL;
