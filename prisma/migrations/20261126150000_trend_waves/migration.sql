-- A later wave of an open trend (anomalous again after 6 h quiet) that grows more severe than the trend's peak is
-- detected anew: where that wave began, and the peak severity published, are kept per trend. Trends now end 24 h
-- after their last anomalous bucket.
ALTER TABLE "trends" ADD COLUMN "wave_start" TIMESTAMP(3),
ADD COLUMN "peak_severity" TEXT;
