-- A subscription's delivery rate limit: at most this many sends per second to its endpoint, fleet-wide (null: none).
ALTER TABLE "webhook_subscriptions" ADD COLUMN "rate_limit" INTEGER;
