-- The time zone a mute's rule is read in (an IANA name): BYHOUR=18 is 18:00 there, across daylight-saving changes.
-- Mutes made before read their rules in UTC, as they did.
ALTER TABLE "mutes" ADD COLUMN "time_zone" TEXT NOT NULL DEFAULT 'UTC';
