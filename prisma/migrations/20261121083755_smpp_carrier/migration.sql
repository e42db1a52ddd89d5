-- CreateTable
CREATE TABLE "smpp_parts" (
    "reference" TEXT NOT NULL,
    "part" INTEGER NOT NULL,
    "parts" INTEGER NOT NULL,
    "concat_ref" INTEGER NOT NULL,
    "smsc_message_id" TEXT,
    "submitted_at" TIMESTAMPTZ(3),
    "state" TEXT NOT NULL DEFAULT 'pending',
    "error_code" TEXT,
    "error_message" TEXT,

    CONSTRAINT "smpp_parts_pkey" PRIMARY KEY ("reference","part")
);

-- CreateTable
CREATE TABLE "smpp_receipts" (
    "smsc_message_id" TEXT NOT NULL,
    "delivered" BOOLEAN NOT NULL,
    "error_code" TEXT,
    "error_message" TEXT,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "applied_at" TIMESTAMPTZ(3),

    CONSTRAINT "smpp_receipts_pkey" PRIMARY KEY ("smsc_message_id")
);

-- CreateTable
CREATE TABLE "smpp_inbound_parts" (
    "source_addr" TEXT NOT NULL,
    "destination_addr" TEXT NOT NULL,
    "concat_ref" INTEGER NOT NULL,
    "parts" INTEGER NOT NULL,
    "part" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "smpp_inbound_parts_pkey" PRIMARY KEY ("source_addr","destination_addr","concat_ref","parts","part")
);

-- CreateIndex
CREATE UNIQUE INDEX "smpp_parts_smsc_message_id_key" ON "smpp_parts"("smsc_message_id");

-- CreateIndex
CREATE INDEX "smpp_receipts_applied_at_received_at_idx" ON "smpp_receipts"("applied_at", "received_at");
