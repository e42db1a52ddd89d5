-- CreateTable
CREATE TABLE "message_stat_totals" (
    "account_id" TEXT NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "messages" INTEGER NOT NULL DEFAULT 0,
    "segments" INTEGER NOT NULL DEFAULT 0,
    "scheduled" INTEGER NOT NULL DEFAULT 0,
    "queued" INTEGER NOT NULL DEFAULT 0,
    "sent" INTEGER NOT NULL DEFAULT 0,
    "delivered" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "cancelled" INTEGER NOT NULL DEFAULT 0,
    "replies" INTEGER NOT NULL DEFAULT 0,
    "opt_outs" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "message_stat_totals_pkey" PRIMARY KEY ("account_id","bucket")
);

-- AddForeignKey
ALTER TABLE "message_stat_totals" ADD CONSTRAINT "message_stat_totals_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The totals of the rows kept so far.
INSERT INTO "message_stat_totals" ("account_id", "bucket", "messages", "segments", "scheduled", "queued", "sent",
  "delivered", "failed", "cancelled", "replies", "opt_outs")
SELECT "account_id", "bucket", sum("messages"), sum("segments"), sum("scheduled"), sum("queued"), sum("sent"),
  sum("delivered"), sum("failed"), sum("cancelled"), sum("replies"), sum("opt_outs")
FROM "message_stats" GROUP BY 1, 2;
