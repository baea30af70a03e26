-- Google counts YouTube quota per Cloud project, not per connection: connections on one project share one ledger.
CREATE TABLE "social_quota_projects" (
    "provider" TEXT NOT NULL,
    "project" TEXT NOT NULL,
    "quota" JSONB NOT NULL DEFAULT '{}',
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "social_quota_projects_pkey" PRIMARY KEY ("provider","project")
);
