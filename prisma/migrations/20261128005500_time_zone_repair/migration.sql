-- Time zones the runtime accepted but PostgreSQL does not know (ICU keeps names tzdata dropped,
-- such as US/Pacific-New): every statement that read one in SQL failed. Tern now takes a zone
-- only when both know it; here the stored ones are repaired. Each becomes the zone its name
-- stood for (tzdata's old backward links; a SystemV zone, a fixed offset, the Etc/GMT zone of
-- that offset, or the US zone its daylight-saving variant followed) when PostgreSQL knows that
-- one, and UTC otherwise. Names are compared without case, as both the runtime and PostgreSQL do.
CREATE TEMPORARY TABLE "time_zone_repairs" ("name" TEXT PRIMARY KEY, "zone" TEXT NOT NULL);

INSERT INTO "time_zone_repairs" ("name", "zone") VALUES
  ('us/pacific-new', 'America/Los_Angeles'),
  ('canada/east-saskatchewan', 'America/Regina'),
  ('systemv/ast4', 'Etc/GMT+4'),
  ('systemv/ast4adt', 'America/Halifax'),
  ('systemv/cst6', 'Etc/GMT+6'),
  ('systemv/cst6cdt', 'America/Chicago'),
  ('systemv/est5', 'Etc/GMT+5'),
  ('systemv/est5edt', 'America/New_York'),
  ('systemv/hst10', 'Etc/GMT+10'),
  ('systemv/mst7', 'Etc/GMT+7'),
  ('systemv/mst7mdt', 'America/Denver'),
  ('systemv/pst8', 'Etc/GMT+8'),
  ('systemv/pst8pdt', 'America/Los_Angeles'),
  ('systemv/yst9', 'Etc/GMT+9'),
  ('systemv/yst9ydt', 'America/Anchorage');

-- What each stored name that PostgreSQL does not know becomes.
CREATE TEMPORARY TABLE "time_zone_fixes" AS
  SELECT DISTINCT stored."timezone" AS "stored", COALESCE(
    (SELECT r."zone" FROM "time_zone_repairs" r
      WHERE r."name" = lower(stored."timezone")
        AND EXISTS (SELECT 1 FROM pg_timezone_names n WHERE n."name" = r."zone")),
    'UTC') AS "zone"
  FROM (
    SELECT "timezone" FROM "account_settings"
    UNION SELECT "timezone" FROM "contacts" WHERE "timezone" IS NOT NULL
    UNION SELECT "timezone" FROM "account_quotas" WHERE "timezone" IS NOT NULL) stored
  WHERE lower(stored."timezone") NOT IN (SELECT lower("name") FROM pg_timezone_names);

UPDATE "account_settings" s SET "timezone" = f."zone" FROM "time_zone_fixes" f WHERE s."timezone" = f."stored";
UPDATE "contacts" c SET "timezone" = f."zone" FROM "time_zone_fixes" f WHERE c."timezone" = f."stored";
UPDATE "account_quotas" q SET "timezone" = f."zone" FROM "time_zone_fixes" f WHERE q."timezone" = f."stored";

DROP TABLE "time_zone_fixes";
DROP TABLE "time_zone_repairs";
