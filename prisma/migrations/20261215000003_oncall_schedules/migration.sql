-- On-call schedules: a rotation and its overrides, in the schedule's IANA time zone; escalation steps of type
-- notify_on_call name one (their schedule_id is checked when the routing rules are saved).
CREATE TABLE "on_call_schedules" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL DEFAULT 'UTC',
    "rotation" JSONB NOT NULL,
    "overrides" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "on_call_schedules_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "on_call_schedules_account_id_id_idx" ON "on_call_schedules"("account_id", "id");

ALTER TABLE "on_call_schedules" ADD CONSTRAINT "on_call_schedules_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
