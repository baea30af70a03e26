-- A trend ends COOLING_HOURS after the last bucket found anomalous, in progress or closed: kept per trend.
-- Rows written before this (detected_at was then the detection's bucket start) start from that bucket.
ALTER TABLE "trends" ADD COLUMN "last_anomalous_bucket" TIMESTAMP(3),
ADD COLUMN "observed" DOUBLE PRECISION NOT NULL DEFAULT 1;

UPDATE "trends" SET "last_anomalous_bucket" = GREATEST("detected_at", CASE WHEN "stage" <> 'dormant' THEN "bucket_start" END)
 WHERE "status" = 'active';
