-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "dispatched_batches" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "next_batch_at" TIMESTAMPTZ(3);
