-- DropForeignKey
ALTER TABLE "events" DROP CONSTRAINT "events_account_id_fkey";

-- DropForeignKey
ALTER TABLE "events" DROP CONSTRAINT "events_campaign_id_fkey";

-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "dispatched_through_at" TIMESTAMPTZ(3),
ADD COLUMN     "dispatched_through_id" TEXT;
