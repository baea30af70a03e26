-- Web console: per-account frame-ancestors and one-time-link sessions.
ALTER TABLE "accounts" ADD COLUMN "console_frame_ancestors" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

CREATE TABLE "console_sessions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "created_by_key_id" TEXT,
    "label" TEXT,
    "link_hash" TEXT NOT NULL,
    "link_expires_at" TIMESTAMP(3) NOT NULL,
    "session_seconds" INTEGER NOT NULL,
    "opened_at" TIMESTAMP(3),
    "token_hash" TEXT,
    "expires_at" TIMESTAMP(3),
    "revoked_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "console_sessions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "console_sessions_link_hash_key" ON "console_sessions"("link_hash");
CREATE INDEX "console_sessions_account_id_id_idx" ON "console_sessions"("account_id", "id");
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
