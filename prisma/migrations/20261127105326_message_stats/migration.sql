-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "country" TEXT;

-- CreateTable
CREATE TABLE "message_stats" (
    "account_id" TEXT NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "campaign_id" TEXT NOT NULL DEFAULT '',
    "country" TEXT NOT NULL DEFAULT '',
    "carrier" TEXT NOT NULL DEFAULT '',
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

    CONSTRAINT "message_stats_pkey" PRIMARY KEY ("account_id","bucket","campaign_id","country","carrier")
);

-- CreateTable
CREATE TABLE "delivery_time_stats" (
    "account_id" TEXT NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "campaign_id" TEXT NOT NULL DEFAULT '',
    "bin" SMALLINT NOT NULL,
    "messages" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "delivery_time_stats_pkey" PRIMARY KEY ("account_id","bucket","campaign_id","bin")
);

-- AddForeignKey
ALTER TABLE "message_stats" ADD CONSTRAINT "message_stats_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_time_stats" ADD CONSTRAINT "delivery_time_stats_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The numbers of the messages already there (their countries are unknown: they were accepted
-- before Tern kept them). Opt-outs before this version are not tied to a message and stay uncounted.
INSERT INTO "message_stats" ("account_id", "bucket", "campaign_id", "country", "carrier", "messages", "segments",
  "scheduled", "queued", "sent", "delivered", "failed", "cancelled")
SELECT "account_id", to_timestamp(floor(extract(epoch FROM "created_at") / 900) * 900), COALESCE("campaign_id", ''), '',
  COALESCE("carrier", ''), count(*), sum("segments"),
  count(*) FILTER (WHERE "status" = 'scheduled'), count(*) FILTER (WHERE "status" = 'queued'),
  count(*) FILTER (WHERE "status" = 'sent'), count(*) FILTER (WHERE "status" = 'delivered'),
  count(*) FILTER (WHERE "status" = 'failed'), count(*) FILTER (WHERE "status" = 'cancelled')
FROM "messages" GROUP BY 1, 2, 3, 4, 5;

INSERT INTO "message_stats" ("account_id", "bucket", "campaign_id", "country", "carrier", "replies")
SELECT i."account_id", to_timestamp(floor(extract(epoch FROM i."received_at") / 900) * 900),
  COALESCE(m."campaign_id", ''), '', COALESCE(m."carrier", ''), count(*)
FROM "inbound_messages" i JOIN "messages" m ON m."id" = i."message_id"
GROUP BY 1, 2, 3, 4, 5
ON CONFLICT ("account_id", "bucket", "campaign_id", "country", "carrier")
  DO UPDATE SET "replies" = "message_stats"."replies" + excluded."replies";

INSERT INTO "delivery_time_stats" ("account_id", "bucket", "campaign_id", "bin", "messages")
SELECT "account_id", to_timestamp(floor(extract(epoch FROM "created_at") / 900) * 900), COALESCE("campaign_id", ''),
  floor(20 * ln(1 + greatest(0, extract(epoch FROM "delivered_at" - GREATEST("created_at", COALESCE("send_at", "created_at")))))),
  count(*)
FROM "messages" WHERE "status" = 'delivered' AND "delivered_at" IS NOT NULL GROUP BY 1, 2, 3, 4;
