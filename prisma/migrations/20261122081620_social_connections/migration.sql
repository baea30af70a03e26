-- CreateTable
CREATE TABLE "social_connections" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "terms" TEXT[],
    "options" JSONB NOT NULL DEFAULT '{}',
    "credentials_ciphertext" TEXT NOT NULL,
    "base_url" TEXT,
    "cursor" JSONB NOT NULL DEFAULT '{}',
    "quota" JSONB NOT NULL DEFAULT '{}',
    "last_error" TEXT,
    "next_poll_at" TIMESTAMP(3),
    "last_polled_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "social_connections_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "social_connections_status_next_poll_at_idx" ON "social_connections"("status", "next_poll_at");

-- CreateIndex
CREATE UNIQUE INDEX "social_connections_account_id_provider_key" ON "social_connections"("account_id", "provider");

-- AddForeignKey
ALTER TABLE "social_connections" ADD CONSTRAINT "social_connections_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
