-- CreateTable
CREATE TABLE "report_exports" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "rows_written" INTEGER NOT NULL DEFAULT 0,
    "bytes" BIGINT NOT NULL DEFAULT 0,
    "providers" JSONB,
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMP(3),
    "finished_at" TIMESTAMP(3),
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "report_exports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "report_export_chunks" (
    "export_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "report_export_chunks_pkey" PRIMARY KEY ("export_id","seq")
);

-- CreateIndex
CREATE INDEX "report_exports_account_id_created_at_idx" ON "report_exports"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "report_exports_expires_at_idx" ON "report_exports"("expires_at");

-- AddForeignKey
ALTER TABLE "report_exports" ADD CONSTRAINT "report_exports_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "report_export_chunks" ADD CONSTRAINT "report_export_chunks_export_id_fkey" FOREIGN KEY ("export_id") REFERENCES "report_exports"("id") ON DELETE CASCADE ON UPDATE CASCADE;

