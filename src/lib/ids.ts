import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

export type IdPrefix =
  | 'msg'
  | 'inb'
  | 'cmp'
  | 'cnt'
  | 'tpl'
  | 'job'
  | 'whk'
  | 'whd'
  | 'acc'
  | 'evt'
  | 'req'
  | 'key'
  | 'rte'
  | 'vrf';

/**
 * Opaque identifiers with a readable prefix. UUIDv7 keeps them roughly time-ordered,
 * which keeps inserts local in the primary-key index.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidv7().replaceAll('-', '')}`;
}

const bulk = { msecs: 0, seq: 0 };

/**
 * `count` identifiers for one bulk insert, ascending like newId's (UUIDv7: the millisecond, then a
 * counter, then random bits), with their random bytes drawn at once rather than 16 at a time,
 * which is most of the cost of 100,000 ids.
 */
export function newIds(prefix: IdPrefix, count: number): string[] {
  const random = randomBytes(16 * count);
  const now = Date.now();
  if (now > bulk.msecs) {
    bulk.msecs = now;
    // From a random point of the lower half, so that a file's worth of ids never wraps the counter.
    bulk.seq = random.readUInt32BE(0) >>> 1;
  }
  return Array.from({ length: count }, (_, i) => {
    bulk.seq += 1;
    return `${prefix}_${uuidv7({ msecs: bulk.msecs, seq: bulk.seq, random: random.subarray(i * 16, i * 16 + 16) }).replaceAll('-', '')}`;
  });
}
