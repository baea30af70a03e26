-- A subscription may render its bodies through a template (a chat incoming webhook's card).
ALTER TABLE "webhook_subscriptions" ADD COLUMN "body_template" JSONB;
