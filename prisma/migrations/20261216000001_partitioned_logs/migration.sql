-- The append-only logs that grow with traffic become range-partitioned by day (PostgreSQL's declarative
-- partitioning, no extension): retention drops a whole day's partition instead of deleting its rows one by one.
-- signals by observed_at (bounded on ingestion to the last 30 days and the next hour), webhook_executions and
-- outbox_attempts by created_at. A partitioned table's unique keys must hold its partition column, hence the keys below; a DEFAULT
-- partition takes any row no day partition covers, so an insert never fails for want of one.
-- The service creates day partitions ahead (trendgate_ensure_day_partitions, from packages/db/src/partitions.ts).

-- Creates the day partitions of `parent` (range-partitioned on `col`) from first_day to last_day that do not exist
-- yet; returns how many it made. Each is created as a plain table, filled with the rows of its day that the DEFAULT
-- partition took meanwhile (none, while partitions are made ahead), then attached: ATTACH takes a lighter lock on the
-- parent than CREATE ... PARTITION OF, so inserts into other days go on. Serialised per table by an advisory lock.
CREATE FUNCTION trendgate_ensure_day_partitions(parent text, col text, first_day date, last_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  d date;
  part text;
  made integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('trendgate_ensure_day_partitions:' || parent));
  FOR d IN SELECT generate_series(first_day, last_day, interval '1 day')::date LOOP
    part := parent || '_p' || to_char(d, 'YYYYMMDD');
    CONTINUE WHEN to_regclass(part) IS NOT NULL;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
                   parent || '_default', col, d::timestamp, col, (d + 1)::timestamp, part);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, d::timestamp, (d + 1)::timestamp);
    made := made + 1;
  END LOOP;
  RETURN made;
END
$$;

-- signals ----------------------------------------------------------------------------------------------------------
ALTER TABLE "signals" RENAME TO "signals_unpartitioned";
ALTER TABLE "signals_unpartitioned" RENAME CONSTRAINT "signals_pkey" TO "signals_unpartitioned_pkey";
ALTER TABLE "signals_unpartitioned" RENAME CONSTRAINT "signals_account_id_fkey" TO "signals_unpartitioned_account_id_fkey";
ALTER INDEX "signals_account_id_source_external_id_key" RENAME TO "signals_unpartitioned_account_id_source_external_id_key";
ALTER INDEX "signals_account_id_topic_observed_at_idx" RENAME TO "signals_unpartitioned_account_id_topic_observed_at_idx";

CREATE TABLE "signals" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "sentiment" DOUBLE PRECISION,
    "observed_at" TIMESTAMP(3) NOT NULL,
    "link" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "text" TEXT,
    CONSTRAINT "signals_pkey" PRIMARY KEY ("id", "observed_at")
) PARTITION BY RANGE ("observed_at");
CREATE UNIQUE INDEX "signals_account_id_source_external_id_observed_at_key" ON "signals"("account_id", "source", "external_id", "observed_at");
CREATE INDEX "signals_account_id_topic_observed_at_idx" ON "signals"("account_id", "topic", "observed_at");
ALTER TABLE "signals" ADD CONSTRAINT "signals_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE TABLE "signals_default" PARTITION OF "signals" DEFAULT;
SELECT trendgate_ensure_day_partitions('signals', 'observed_at',
  least((SELECT min("observed_at") FROM "signals_unpartitioned")::date, (now() AT TIME ZONE 'UTC')::date - 31), (now() AT TIME ZONE 'UTC')::date + 14);
INSERT INTO "signals" SELECT "id", "account_id", "source", "external_id", "topic", "category", "count", "sentiment", "observed_at", "link", "created_at", "text"
  FROM "signals_unpartitioned";
DROP TABLE "signals_unpartitioned";

-- webhook_executions -----------------------------------------------------------------------------------------------
ALTER TABLE "webhook_executions" RENAME TO "webhook_executions_unpartitioned";
ALTER TABLE "webhook_executions_unpartitioned" RENAME CONSTRAINT "webhook_executions_pkey" TO "webhook_executions_unpartitioned_pkey";
ALTER INDEX "webhook_executions_created_at_idx" RENAME TO "webhook_executions_unpartitioned_created_at_idx";
ALTER INDEX "webhook_executions_subscription_id_id_idx" RENAME TO "webhook_executions_unpartitioned_subscription_id_id_idx";

CREATE TABLE "webhook_executions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "trigger" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "request_url" TEXT NOT NULL,
    "request_headers" JSON NOT NULL,
    "request_body_bytes" INTEGER NOT NULL,
    "response_status" INTEGER,
    "response_body" TEXT,
    "response_body_truncated" BOOLEAN NOT NULL DEFAULT false,
    "duration_ms" INTEGER NOT NULL,
    "error_class" TEXT,
    "error_message" TEXT,
    "next_retry_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_executions_pkey" PRIMARY KEY ("id", "created_at")
) PARTITION BY RANGE ("created_at");
CREATE INDEX "webhook_executions_subscription_id_id_idx" ON "webhook_executions"("subscription_id", "id");
CREATE TABLE "webhook_executions_default" PARTITION OF "webhook_executions" DEFAULT;
SELECT trendgate_ensure_day_partitions('webhook_executions', 'created_at',
  least((SELECT min("created_at") FROM "webhook_executions_unpartitioned")::date, (now() AT TIME ZONE 'UTC')::date - 1), (now() AT TIME ZONE 'UTC')::date + 14);
INSERT INTO "webhook_executions" SELECT "id", "account_id", "subscription_id", "delivery_id", "attempt", "trigger", "outcome", "request_url",
    "request_headers", "request_body_bytes", "response_status", "response_body", "response_body_truncated", "duration_ms", "error_class",
    "error_message", "next_retry_at", "created_at"
  FROM "webhook_executions_unpartitioned";
DROP TABLE "webhook_executions_unpartitioned";

-- outbox_attempts --------------------------------------------------------------------------------------------------
-- (message_id, attempt) stays indexed but no longer unique (a unique key would have to hold created_at): an attempt is
-- written only while its message has fewer attempts, under the message's row lock, so it cannot be written twice.
ALTER TABLE "outbox_attempts" RENAME TO "outbox_attempts_unpartitioned";
ALTER TABLE "outbox_attempts_unpartitioned" RENAME CONSTRAINT "outbox_attempts_pkey" TO "outbox_attempts_unpartitioned_pkey";
ALTER INDEX "outbox_attempts_created_at_idx" RENAME TO "outbox_attempts_unpartitioned_created_at_idx";
ALTER INDEX "outbox_attempts_message_id_attempt_key" RENAME TO "outbox_attempts_unpartitioned_message_id_attempt_key";

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
    CONSTRAINT "outbox_attempts_pkey" PRIMARY KEY ("id", "created_at")
) PARTITION BY RANGE ("created_at");
CREATE INDEX "outbox_attempts_message_id_attempt_idx" ON "outbox_attempts"("message_id", "attempt");
CREATE TABLE "outbox_attempts_default" PARTITION OF "outbox_attempts" DEFAULT;
SELECT trendgate_ensure_day_partitions('outbox_attempts', 'created_at',
  least((SELECT min("created_at") FROM "outbox_attempts_unpartitioned")::date, (now() AT TIME ZONE 'UTC')::date - 1), (now() AT TIME ZONE 'UTC')::date + 14);
INSERT INTO "outbox_attempts" SELECT "id", "message_id", "account_id", "queue", "attempt", "outcome", "response_status", "error_class",
    "error_message", "duration_ms", "next_retry_at", "created_at"
  FROM "outbox_attempts_unpartitioned";
DROP TABLE "outbox_attempts_unpartitioned";
