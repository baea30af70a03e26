-- Feedback on detections ("not a trend" / "useful") and the evidence bar it sets per topic.
ALTER TABLE "topics" ADD COLUMN "evidence_bar" DOUBLE PRECISION NOT NULL DEFAULT 1;

CREATE TABLE "trend_feedback" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "trend_id" TEXT NOT NULL,
    "topic_id" TEXT NOT NULL,
    "detected_at" TIMESTAMP(3) NOT NULL,
    "verdict" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "note" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "trend_feedback_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "trend_feedback_trend_id_detected_at_actor_key" ON "trend_feedback"("trend_id", "detected_at", "actor");
CREATE INDEX "trend_feedback_topic_id_idx" ON "trend_feedback"("topic_id");
CREATE INDEX "trend_feedback_account_id_trend_id_id_idx" ON "trend_feedback"("account_id", "trend_id", "id");
ALTER TABLE "trend_feedback" ADD CONSTRAINT "trend_feedback_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "trend_feedback" ADD CONSTRAINT "trend_feedback_topic_id_fkey" FOREIGN KEY ("topic_id") REFERENCES "topics"("id") ON DELETE CASCADE ON UPDATE CASCADE;
