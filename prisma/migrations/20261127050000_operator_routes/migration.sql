-- Operator routing rules with escalation steps, Teams beside Slack, ads plans approved from a card.
CREATE TABLE "operator_routes" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "match" JSONB NOT NULL,
    "provider" TEXT NOT NULL,
    "channel_id" TEXT NOT NULL,
    "escalation" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "operator_routes_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "operator_routes_account_id_position_key" ON "operator_routes"("account_id", "position");
ALTER TABLE "operator_routes" ADD CONSTRAINT "operator_routes_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "accounts" ADD COLUMN "operator_escalation" JSONB NOT NULL DEFAULT '[]';

ALTER TABLE "operator_items"
    ADD COLUMN "chat_provider" TEXT,
    ADD COLUMN "route_id" TEXT,
    ADD COLUMN "source" TEXT NOT NULL DEFAULT 'trends',
    ADD COLUMN "ads_plan_id" TEXT,
    ADD COLUMN "escalation_run" TEXT,
    ADD COLUMN "escalation_step" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "escalation_repeats" INTEGER NOT NULL DEFAULT 0;
-- Cards posted before there were two chat providers went through Slack.
UPDATE "operator_items" SET "chat_provider" = 'slack' WHERE "chat_message_ts" IS NOT NULL;

ALTER TABLE "ads_plans" ADD COLUMN "approved_by" TEXT;
