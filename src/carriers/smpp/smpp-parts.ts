import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';

/** A part of a message as stored before and after the SMSC took it. */
export interface PartRow {
  part: number;
  parts: number;
  concat_ref: number;
  smsc_message_id: string | null;
}

interface PartsRequest {
  reference: string;
  parts: number;
  concatRef: number;
}

interface AcceptedPart {
  reference: string;
  part: number;
  smscMessageId: string;
  at: Date;
}

// Sends run side by side (the window): their statements go together, one round trip and one
// commit for many messages, the way acceptance and claims are batched.
const PART_BATCHING = { maxBatch: 200, maxInFlight: 2 };

/**
 * The parts of the messages one SMPP carrier sends, kept in PostgreSQL: which parts a message
 * has, and the SMSC's id of each part it acknowledged, so that a retry sends only what is left.
 */
export class SmppParts {
  private readonly prepared = new Batcher(
    (requests: PartsRequest[]) => this.prepareMany(requests),
    PART_BATCHING,
  );
  private readonly accepted = new Batcher((parts: AcceptedPart[]) => this.acceptMany(parts), PART_BATCHING);

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly carrier: string,
  ) {}

  /**
   * The parts a message already has, from an earlier attempt; none when it is new, and then its
   * `parts` rows are recorded with `concatRef`.
   */
  prepare(reference: string, parts: number, concatRef: number): Promise<PartRow[]> {
    return this.prepared.add({ reference, parts, concatRef });
  }

  /** The SMSC acknowledged a part: its id is kept before the next part goes out. */
  async recordAccepted(reference: string, part: number, smscMessageId: string): Promise<void> {
    const failure = await this.accepted.add({ reference, part, smscMessageId, at: this.clock.now() });
    if (failure) throw failure;
  }

  /**
   * One statement for every request of the batch. The insert's rows are invisible to the same
   * statement's SELECT, so it answers exactly the rows of earlier attempts.
   */
  private async prepareMany(requests: PartsRequest[]): Promise<PartRow[][]> {
    const rows = await this.prisma.$queryRaw<(PartRow & { reference: string })[]>(Prisma.sql`
      WITH request AS (
        SELECT * FROM unnest(${requests.map((r) => r.reference)}::text[], ${requests.map((r) => r.parts)}::int[],
          ${requests.map((r) => r.concatRef)}::int[]) AS r(reference, parts, concat_ref)),
      recorded AS (
        INSERT INTO smpp_parts (reference, part, parts, concat_ref, carrier)
        SELECT request.reference, part, request.parts, request.concat_ref, ${this.carrier}
        FROM request, generate_series(1, request.parts) AS part
        WHERE NOT EXISTS (SELECT 1 FROM smpp_parts known WHERE known.reference = request.reference)
        ON CONFLICT DO NOTHING)
      SELECT reference, part, parts, concat_ref, smsc_message_id FROM smpp_parts
      WHERE reference = ANY(${requests.map((r) => r.reference)}::text[])
      ORDER BY reference, part`);
    const byReference = new Map<string, PartRow[]>();
    for (const { reference, ...row } of rows) {
      const known = byReference.get(reference) ?? [];
      known.push(row);
      byReference.set(reference, known);
    }
    return requests.map((request) => byReference.get(request.reference) ?? []);
  }

  /**
   * Each part's failure, or undefined. One statement for the batch; if it fails (an SMSC that
   * gave an id twice), each part is written alone, so only the part at fault fails its send.
   */
  private async acceptMany(parts: AcceptedPart[]): Promise<(Error | undefined)[]> {
    try {
      await this.acceptStatement(parts);
      return parts.map(() => undefined);
    } catch (error) {
      if (parts.length === 1) return [error instanceof Error ? error : new Error(String(error))];
      return Promise.all(parts.map(async (part) => (await this.acceptMany([part]))[0]));
    }
  }

  private acceptStatement(parts: AcceptedPart[]): Promise<number> {
    return this.prisma.$executeRaw(Prisma.sql`
      UPDATE smpp_parts p SET carrier = ${this.carrier}, smsc_message_id = a.smsc_message_id, submitted_at = a.at
      FROM unnest(${parts.map((a) => a.reference)}::text[], ${parts.map((a) => a.part)}::int[],
        ${parts.map((a) => a.smscMessageId)}::text[], ${parts.map((a) => a.at.toISOString())}::timestamptz[])
        AS a(reference, part, smsc_message_id, at)
      WHERE p.reference = a.reference AND p.part = a.part`);
  }
}
