-- Idempotency-Key answers of requests that wrote rows, recorded in the same transaction as those rows (sealed).
CREATE TABLE "idempotency_keys" (
    "account_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "response_status" INTEGER NOT NULL,
    "response_sealed" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("account_id","key")
);

CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");
