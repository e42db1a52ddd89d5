-- AlterTable
ALTER TABLE "account_quotas" ADD COLUMN     "noticed_day" DATE,
ADD COLUMN     "noticed_day_threshold" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "noticed_month" DATE,
ADD COLUMN     "noticed_month_threshold" INTEGER NOT NULL DEFAULT 0;
