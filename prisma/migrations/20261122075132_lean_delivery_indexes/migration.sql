-- DropForeignKey
ALTER TABLE "webhook_executions" DROP CONSTRAINT "webhook_executions_delivery_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_executions" DROP CONSTRAINT "webhook_executions_subscription_id_fkey";

-- DropIndex
DROP INDEX "webhook_deliveries_subscription_id_status_created_at_idx";

-- DropIndex
DROP INDEX "webhook_executions_delivery_id_idx";
