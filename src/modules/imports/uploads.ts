import { createWriteStream } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { Clock } from '../../lib/clock.js';
import { streamUpload } from '../../uploads.js';

/**
 * The most bytes one row of `upload_chunks` holds, and all an upload holds in memory. A row
 * comes back from PostgreSQL as hex text, twice its size: at 32 KiB that string is an ordinary
 * young object V8 frees at once, where 256 KiB rows made half-megabyte strings that waited for a
 * full collection and added some 20 MiB to the worker's resident memory while it copied a file.
 */
export const UPLOAD_CHUNK_BYTES = 32 * 1024;
/** Pieces read back per round trip. */
const PIECES_PER_READ = 8;
/** Uploads removed by one sweep, at most. */
const ABANDONED_PER_SWEEP = 100;

/**
 * Uploaded files, kept in PostgreSQL (`uploads`, `upload_chunks`) where every process on every
 * machine already reaches them: the API process that accepts a file writes it in pieces of
 * UPLOAD_CHUNK_BYTES as they arrive, waiting for each to be written before taking more of it,
 * and the worker process that imports it, wherever it runs, reads the pieces back one at a time.
 * An upload is stored under the id of the import job it is for.
 */
export class Uploads {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  /**
   * Stores the file under `id` as it arrives, counting its bytes: 413 as soon as it passes
   * `maxBytes`. On any failure nothing of it is kept.
   */
  async store(id: string, source: Readable, maxBytes: number): Promise<number> {
    await this.pool.query('INSERT INTO uploads (id, created_at) VALUES ($1, $2)', [id, this.clock.now()]);
    try {
      return await streamUpload(source, this.pieceWriter(id), maxBytes);
    } catch (error) {
      await this.remove(id);
      throw error;
    }
  }

  /** Writes the upload to a new local file, a piece at a time; false when there is no such upload. */
  async copyToFile(id: string, path: string): Promise<boolean> {
    const found = await this.pool.query('SELECT 1 FROM uploads WHERE id = $1', [id]);
    if (found.rowCount === 0) return false;
    await pipeline(Readable.from(this.pieces(id)), createWriteStream(path, { flags: 'wx' }));
    return true;
  }

  async remove(id: string): Promise<void> {
    await this.pool.query('DELETE FROM uploads WHERE id = $1', [id]);
  }

  /**
   * Removes uploads stored before `before` that no `processing` import job waits for: left by a
   * request or a process that died between storing the file and creating its job, or by a job
   * that ended without removing it. The number removed.
   */
  async removeAbandoned(before: Date): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM uploads WHERE id IN (
         SELECT u.id FROM uploads u
         WHERE u.created_at < $1
           AND NOT EXISTS (SELECT 1 FROM import_jobs j WHERE j.id = u.id AND j.status = 'processing')
         LIMIT $2)`,
      [before, ABANDONED_PER_SWEEP],
    );
    return rowCount ?? 0;
  }

  private async *pieces(id: string): AsyncGenerator<Buffer> {
    for (let next = 0; ; next += PIECES_PER_READ) {
      const { rows } = await this.pool.query<{ data: Buffer }>(
        'SELECT data FROM upload_chunks WHERE upload_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3',
        [id, next, PIECES_PER_READ],
      );
      for (const row of rows) yield row.data;
      if (rows.length < PIECES_PER_READ) return;
    }
  }

  /**
   * Fills one piece and writes it as a row before taking more of the stream (the write's
   * callback waits for the INSERT), so a slow database holds back the client, not memory.
   */
  private pieceWriter(id: string): Writable {
    const piece = Buffer.allocUnsafe(UPLOAD_CHUNK_BYTES);
    let filled = 0;
    let seq = 0;
    const insert = async (data: Buffer) => {
      await this.pool.query('INSERT INTO upload_chunks (upload_id, seq, data) VALUES ($1, $2, $3)', [
        id,
        seq,
        data,
      ]);
      seq += 1;
    };
    const fill = async (chunk: Buffer) => {
      for (let offset = 0; offset < chunk.length; ) {
        const copied = chunk.copy(piece, filled, offset);
        filled += copied;
        offset += copied;
        if (filled === piece.length) {
          await insert(piece);
          filled = 0;
        }
      }
    };
    return new Writable({
      write(chunk: Buffer, _encoding, done) {
        fill(chunk).then(() => done(), done);
      },
      final(done) {
        (filled > 0 ? insert(piece.subarray(0, filled)) : Promise.resolve()).then(() => done(), done);
      },
    });
  }
}
