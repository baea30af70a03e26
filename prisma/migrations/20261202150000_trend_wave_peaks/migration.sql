-- A later wave larger than the wave before it is announced as a new trend: each wave's largest excess is kept.
ALTER TABLE "trends" ADD COLUMN "wave_peak_excess" DOUBLE PRECISION;
ALTER TABLE "trends" ADD COLUMN "prior_wave_peak_excess" DOUBLE PRECISION;
