-- AlterTable
ALTER TABLE "message_stat_totals" DROP CONSTRAINT "message_stat_totals_pkey",
ADD COLUMN     "slot" SMALLINT NOT NULL DEFAULT 0,
ADD CONSTRAINT "message_stat_totals_pkey" PRIMARY KEY ("account_id", "bucket", "slot");

-- AlterTable
ALTER TABLE "message_stats" DROP CONSTRAINT "message_stats_pkey",
ADD COLUMN     "slot" SMALLINT NOT NULL DEFAULT 0,
ADD CONSTRAINT "message_stats_pkey" PRIMARY KEY ("account_id", "bucket", "campaign_id", "country", "carrier", "slot");
