import { v7 as uuidv7 } from 'uuid';

export type IdPrefix = 'msg' | 'inb' | 'cmp' | 'cnt' | 'tpl' | 'job' | 'whk' | 'whd' | 'acc' | 'evt' | 'req';

/**
 * Opaque identifiers with a readable prefix. UUIDv7 keeps them roughly time-ordered,
 * which keeps inserts local in the primary-key index.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidv7().replaceAll('-', '')}`;
}
