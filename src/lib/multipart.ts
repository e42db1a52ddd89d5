import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import busboy from 'busboy';
import { errorCodes, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type GraphQLOperation, processRequest } from 'graphql-upload-minimal';
import { AppError, type FieldIssue } from '../errors.js';
import { saveUpload } from '../uploads.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads a multipart/form-data body itself, streaming, instead of Fastify parsing it. */
    multipart?: boolean;
  }
}

// Forms of a few text fields and one file; anything far beyond is not a client of this API.
const MAX_FORM_FIELDS = 100;
const MAX_FIELD_BYTES = 64 * 1024;

export function isMultipart(request: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
}

/**
 * Lets multipart bodies through, unread, to the routes that stream them (and only those: any
 * other route refuses them as before), and discards what is left of such a body once the
 * answer went out early (413, a refused field), so that the connection stays usable.
 */
export function acceptMultipart(app: FastifyInstance): void {
  app.addContentTypeParser('multipart/form-data', (request, _payload, done) => {
    if (request.routeOptions.config.multipart) done(null);
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']));
  });
  app.addHook('onResponse', async (request) => {
    if (request.routeOptions.config.multipart && !request.raw.complete) {
      request.raw.unpipe();
      request.raw.resume();
    }
  });
}

/**
 * A GraphQL multipart request (the graphql-multipart-request-spec): its operations, with an
 * Upload in place of each file, resolved as the file's part arrives; nothing is buffered.
 */
export async function readGraphQLMultipart(
  request: FastifyRequest,
  reply: FastifyReply,
  maxFieldBytes: number,
): Promise<GraphQLOperation | GraphQLOperation[]> {
  try {
    return await processRequest(request.raw, reply.raw, { maxFiles: 1, maxFieldSize: maxFieldBytes });
  } catch (error) {
    const status = (error as { status?: number }).status;
    throw new AppError(
      status === 413 ? 'payload_too_large' : 'bad_request',
      error instanceof Error ? error.message : 'The multipart request is malformed',
    );
  }
}

export interface MultipartForm {
  /** Text fields by name; a repeated name keeps every value. */
  fields: Map<string, string[]>;
  /** The file part, spooled to disk. */
  file: { filename: string; mimetype: string; path: string } | null;
  /** Parts the form should not have: other files, values cut at the size limit. */
  problems: FieldIssue[];
  /** Removes the spooled file. */
  discard(): Promise<void>;
}

/**
 * Reads a plain multipart form with one file part. Its text fields may come before or after
 * the file, so the file is spooled to a temporary file (counted while streaming: 413 as soon as
 * it passes `maxFileBytes`) until the whole form is known.
 */
export async function readMultipartForm(
  request: FastifyRequest,
  options: { fileField: string; maxFileBytes: number },
): Promise<MultipartForm> {
  if (!isMultipart(request)) throw new AppError('bad_request', 'The body must be multipart/form-data');
  const directory = await mkdtemp(join(tmpdir(), 'tern-upload-'));
  const discard = () => rm(directory, { recursive: true, force: true });
  try {
    const form = await parseForm(request, options, join(directory, 'file'));
    return { ...form, discard };
  } catch (error) {
    await discard();
    throw error;
  }
}

function parseForm(
  request: FastifyRequest,
  options: { fileField: string; maxFileBytes: number },
  spoolPath: string,
): Promise<Omit<MultipartForm, 'discard'>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        limits: { fields: MAX_FORM_FIELDS, fieldSize: MAX_FIELD_BYTES },
      });
    } catch (error) {
      reject(
        new AppError(
          'bad_request',
          `The multipart body cannot be read: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
      return;
    }
    const fields = new Map<string, string[]>();
    const problems: FieldIssue[] = [];
    let file: MultipartForm['file'] = null;
    let saving: Promise<unknown> = Promise.resolve();
    const fail = (error: unknown) => {
      request.raw.unpipe(parser);
      reject(error);
    };
    // busboy hands on a part whose Content-Disposition has no name, or an empty one, as such.
    const unnamed = () =>
      new AppError(
        'bad_request',
        'Every part of the form needs a name (Content-Disposition: form-data; name="…")',
      );
    parser.on('field', (name, value, info) => {
      if (!name) {
        fail(unnamed());
        return;
      }
      if (info.valueTruncated) problems.push({ field: name, issue: 'too_long' });
      // busboy decodes bytes that are not UTF-8 as U+FFFD; these fields (column names, a
      // delimiter) never hold that character, so it can only be a client sending another encoding.
      else if (value.includes('\uFFFD')) problems.push({ field: name, issue: 'invalid_value' });
      fields.set(name, [...(fields.get(name) ?? []), value]);
    });
    parser.on('file', (name, stream, info) => {
      if (!name) {
        stream.resume();
        fail(unnamed());
        return;
      }
      if (name !== options.fileField || file) {
        problems.push({ field: name, issue: name === options.fileField ? 'invalid_value' : 'unknown_field' });
        stream.resume();
        return;
      }
      file = { filename: info.filename ?? '', mimetype: info.mimeType, path: spoolPath };
      saving = saveUpload(stream, spoolPath, options.maxFileBytes).catch(fail);
    });
    parser.once('fieldsLimit', () =>
      fail(new AppError('payload_too_large', `The form has more than ${MAX_FORM_FIELDS} fields`)),
    );
    parser.once('error', (error) =>
      fail(
        new AppError(
          'bad_request',
          `The multipart body is malformed: ${error instanceof Error ? error.message : String(error)}`,
        ),
      ),
    );
    parser.once('close', () => {
      void saving.then(() => resolve({ fields, file, problems }));
    });
    request.raw.pipe(parser);
  });
}
