-- Issue 11: ads plans (preview, apply, rollback) and the entities mapped to an account's ads category.

-- CreateTable
CREATE TABLE "ads_plans" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "ad_account_id" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "strict_safety" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "changes" JSONB NOT NULL,
    "calls" JSONB NOT NULL,
    "diff" JSONB NOT NULL,
    "refused" JSONB NOT NULL,
    "dry_run" JSONB,
    "prior_state" JSONB NOT NULL,
    "prior_state_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "run_id" TEXT,
    "results" JSONB,
    "status_reason" TEXT,
    "applied_at" TIMESTAMP(3),
    "rollback_of" TEXT,

    CONSTRAINT "ads_plans_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ads_mappings" (
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "entity_name" TEXT,
    "field" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ads_mappings_pkey" PRIMARY KEY ("account_id","provider","entity_id")
);

-- CreateIndex
CREATE INDEX "ads_plans_account_id_provider_created_at_idx" ON "ads_plans"("account_id", "provider", "created_at");

-- CreateIndex
CREATE INDEX "ads_plans_rollback_of_idx" ON "ads_plans"("rollback_of");

