-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "briefing_links_revoked_before" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "trends" ADD COLUMN     "pending_severity" TEXT,
ADD COLUMN     "pending_since" TIMESTAMP(3),
ADD COLUMN     "velocity_event_at" TIMESTAMP(3);

