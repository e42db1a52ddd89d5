-- Rows written before carriers were configured belong to the one carrier there was, which
-- start-up names `default`.

-- DropIndex
DROP INDEX "smpp_parts_smsc_message_id_key";

-- AlterTable
ALTER TABLE "smpp_parts" ADD COLUMN     "carrier" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "smpp_parts" ALTER COLUMN "carrier" DROP DEFAULT;

-- AlterTable
ALTER TABLE "smpp_receipts" DROP CONSTRAINT "smpp_receipts_pkey",
ADD COLUMN     "carrier" TEXT NOT NULL DEFAULT 'default',
ADD CONSTRAINT "smpp_receipts_pkey" PRIMARY KEY ("carrier", "smsc_message_id");
ALTER TABLE "smpp_receipts" ALTER COLUMN "carrier" DROP DEFAULT;

-- CreateIndex
CREATE UNIQUE INDEX "smpp_parts_carrier_smsc_message_id_key" ON "smpp_parts"("carrier", "smsc_message_id");
