-- AlterTable
ALTER TABLE "ads_plans" ADD COLUMN     "executor_expires_at" TIMESTAMP(3);
