-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "paused_reason" TEXT;

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "quota_day" DATE;

-- CreateTable
CREATE TABLE "account_quotas" (
    "account_id" TEXT NOT NULL,
    "daily_segments" INTEGER,
    "monthly_segments" INTEGER,
    "allowed_countries" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "day_start" DATE,
    "day_segments" INTEGER NOT NULL DEFAULT 0,
    "month_start" DATE,
    "month_segments" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "account_quotas_pkey" PRIMARY KEY ("account_id")
);

-- AddForeignKey
ALTER TABLE "account_quotas" ADD CONSTRAINT "account_quotas_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
