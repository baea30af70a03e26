-- The post text of a signal: what a trend's drivers are read from.
ALTER TABLE "signals" ADD COLUMN "text" TEXT;
