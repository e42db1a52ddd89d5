-- AlterTable
ALTER TABLE "import_jobs" DROP COLUMN "file_path";

-- CreateTable
CREATE TABLE "uploads" (
    "id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "uploads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "upload_chunks" (
    "upload_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "upload_chunks_pkey" PRIMARY KEY ("upload_id","seq")
);

-- CreateIndex
CREATE INDEX "uploads_created_at_idx" ON "uploads"("created_at");

-- AddForeignKey
ALTER TABLE "upload_chunks" ADD CONSTRAINT "upload_chunks_upload_id_fkey" FOREIGN KEY ("upload_id") REFERENCES "uploads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Pieces are stored out of line as they are: an XLSX is compressed already, and compressing a
-- CSV's pieces would cost the API CPU for rows that live seconds.
ALTER TABLE "upload_chunks" ALTER COLUMN "data" SET STORAGE EXTERNAL;
