-- AlterTable
ALTER TABLE "account_quotas" ADD COLUMN     "timezone" TEXT;

-- An account whose limits are set keeps counting its quotas in the time zone it has now.
UPDATE "account_quotas" q SET "timezone" = COALESCE(s."timezone", 'UTC')
FROM "accounts" a LEFT JOIN "account_settings" s ON s."account_id" = a."id"
WHERE a."id" = q."account_id"
  AND (q."daily_segments" IS NOT NULL OR q."monthly_segments" IS NOT NULL OR cardinality(q."allowed_countries") > 0);
