-- CreateTable
CREATE TABLE "topics" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "topics_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "topic_buckets" (
    "topic_id" TEXT NOT NULL,
    "bucket_start" TIMESTAMP(3) NOT NULL,
    "count" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "sentiment_sum" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "sentiment_count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "topic_buckets_pkey" PRIMARY KEY ("topic_id","bucket_start")
);

-- CreateTable
CREATE TABLE "trends" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "topic_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "stage" TEXT NOT NULL,
    "velocity" DOUBLE PRECISION NOT NULL,
    "acceleration" DOUBLE PRECISION NOT NULL,
    "baseline" DOUBLE PRECISION NOT NULL,
    "current" DOUBLE PRECISION NOT NULL,
    "anomaly_score" DOUBLE PRECISION NOT NULL,
    "peak_velocity" DOUBLE PRECISION NOT NULL,
    "published_velocity" DOUBLE PRECISION NOT NULL,
    "sentiment" DOUBLE PRECISION,
    "detected_at" TIMESTAMP(3) NOT NULL,
    "bucket_start" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "trends_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "topics_account_id_last_seen_at_idx" ON "topics"("account_id", "last_seen_at");

-- CreateIndex
CREATE UNIQUE INDEX "topics_account_id_key_key" ON "topics"("account_id", "key");

-- CreateIndex
CREATE UNIQUE INDEX "trends_topic_id_key" ON "trends"("topic_id");

-- CreateIndex
CREATE INDEX "trends_account_id_status_id_idx" ON "trends"("account_id", "status", "id");

-- AddForeignKey
ALTER TABLE "topics" ADD CONSTRAINT "topics_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "topic_buckets" ADD CONSTRAINT "topic_buckets_topic_id_fkey" FOREIGN KEY ("topic_id") REFERENCES "topics"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "trends" ADD CONSTRAINT "trends_topic_id_fkey" FOREIGN KEY ("topic_id") REFERENCES "topics"("id") ON DELETE CASCADE ON UPDATE CASCADE;
