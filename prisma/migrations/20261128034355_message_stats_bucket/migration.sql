-- CreateIndex
CREATE INDEX "message_stats_bucket_idx" ON "message_stats"("bucket");
