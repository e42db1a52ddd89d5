import type pg from 'pg';
import { databaseTimeZones, knowDatabaseTimeZones } from '../lib/time-zone.js';

/**
 * Reads the zone names PostgreSQL knows, once per process (at start): from then on a time zone
 * is valid only when PostgreSQL knows it too (src/lib/time-zone.ts).
 */
export async function readDatabaseTimeZones(pool: pg.Pool): Promise<void> {
  if (databaseTimeZones()) return;
  const { rows } = await pool.query<{ name: string }>('SELECT name FROM pg_timezone_names');
  knowDatabaseTimeZones(rows.map((row) => row.name));
}
