-- CreateTable
CREATE TABLE "topic_series" (
    "topic_id" TEXT NOT NULL,
    "bucket_seconds" INTEGER NOT NULL,
    "first_bucket" INTEGER NOT NULL,
    "counts" BYTEA NOT NULL,
    "through_bucket" INTEGER NOT NULL,
    "built_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "topic_series_pkey" PRIMARY KEY ("topic_id")
);

-- AddForeignKey
ALTER TABLE "topic_series" ADD CONSTRAINT "topic_series_topic_id_fkey" FOREIGN KEY ("topic_id") REFERENCES "topics"("id") ON DELETE CASCADE ON UPDATE CASCADE;

