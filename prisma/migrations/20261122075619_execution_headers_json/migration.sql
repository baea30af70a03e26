-- AlterTable
ALTER TABLE "webhook_executions" ALTER COLUMN "request_headers" SET DATA TYPE JSON;
