-- Submissions from before carriers were configured belong to the one simulator there was, which
-- start-up names `default`.

-- AlterTable
ALTER TABLE "simulated_submissions" ADD COLUMN     "carrier" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "simulated_submissions" ALTER COLUMN "carrier" DROP DEFAULT;
