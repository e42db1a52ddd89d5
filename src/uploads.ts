import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { type Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from './errors.js';

/**
 * An uploaded file as both layers hand it to a service: the shape of graphql-upload-minimal's
 * FileUpload, which /graphql resolves from the multipart request and the /v1 layer builds
 * from its form.
 */
export interface IncomingFile {
  filename: string;
  createReadStream(): Readable;
}

export function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`;
}

/**
 * Streams an upload into `destination`, counting bytes as they pass: the first chunk beyond
 * `maxBytes` ends it with 413 `payload_too_large`, so nothing larger is ever stored or held.
 * Resolves to the bytes written once `destination` has finished.
 */
export async function streamUpload(
  source: Readable,
  destination: Writable,
  maxBytes: number,
): Promise<number> {
  let bytes = 0;
  let sourceFailed = false;
  source.once('error', () => {
    sourceFailed = true;
  });
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes)
        done(new AppError('payload_too_large', `The file is larger than ${describeBytes(maxBytes)}`));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(source, limit, destination);
    return bytes;
  } catch (error) {
    if (error instanceof AppError) throw error;
    // The client went away or broke the multipart body: its request, not the service, failed.
    if (sourceFailed)
      throw new AppError('bad_request', 'The upload ended before the whole file was received');
    throw error;
  }
}

/** An upload streamed into a new file (see streamUpload); on any failure the partial file is removed. */
export async function saveUpload(source: Readable, path: string, maxBytes: number): Promise<number> {
  try {
    return await streamUpload(source, createWriteStream(path, { flags: 'wx' }), maxBytes);
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
}
