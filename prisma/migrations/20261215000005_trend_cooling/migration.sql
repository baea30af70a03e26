-- The calm closed bucket that published trend.cooling for a trend's current wave (null: not announced).
ALTER TABLE "trends" ADD COLUMN "cooling_since" TIMESTAMP(3);
