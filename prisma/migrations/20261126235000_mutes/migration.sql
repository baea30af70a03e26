-- Mutes: topics or categories whose trend events are pushed to nobody for a while.
CREATE TABLE "mutes" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "topic" TEXT,
    "category" TEXT,
    "starts_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ends_at" TIMESTAMP(3),
    "rrule" TEXT,
    "window_minutes" INTEGER,
    "reason" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "suppressed" INTEGER NOT NULL DEFAULT 0,
    "last_suppressed_at" TIMESTAMP(3),
    CONSTRAINT "mutes_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "mutes_account_id_id_idx" ON "mutes"("account_id", "id");
ALTER TABLE "mutes" ADD CONSTRAINT "mutes_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
