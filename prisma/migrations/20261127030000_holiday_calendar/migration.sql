-- An account's holiday calendar: on its holidays trends need stronger evidence.
ALTER TABLE "accounts" ADD COLUMN "holiday_country" TEXT;
ALTER TABLE "accounts" ADD COLUMN "holiday_region" TEXT;
