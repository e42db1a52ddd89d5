-- AlterTable
ALTER TABLE "import_jobs" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "file_path" TEXT,
ADD COLUMN     "processed" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "import_jobs_status_created_at_idx" ON "import_jobs"("status", "created_at");
