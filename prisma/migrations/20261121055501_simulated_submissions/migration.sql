-- CreateTable
CREATE TABLE "simulated_submissions" (
    "reference" TEXT NOT NULL,
    "carrier_message_id" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "submitted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "report_at" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),
    "reported_at" TIMESTAMPTZ(3),

    CONSTRAINT "simulated_submissions_pkey" PRIMARY KEY ("reference")
);

-- CreateIndex
CREATE UNIQUE INDEX "simulated_submissions_carrier_message_id_key" ON "simulated_submissions"("carrier_message_id");

-- CreateIndex
CREATE INDEX "simulated_submissions_report_at_idx" ON "simulated_submissions"("report_at");
