-- Subscriptions choose what they receive: a list of event types (trigger_type event_types), a filter on the event's
-- fields, and custom request headers stored sealed (their names in clear, to show back).
ALTER TABLE "webhook_subscriptions" ADD COLUMN "event_types" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "filter" JSONB,
ADD COLUMN "headers_ciphertext" TEXT,
ADD COLUMN "header_names" TEXT[] DEFAULT ARRAY[]::TEXT[];
