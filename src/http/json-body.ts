import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON bodies as Fastify reads them (its limits, its prototype-poisoning checks), except that
 * bytes which are not UTF-8 are refused: JSON text is UTF-8, and decoding them leniently would
 * store U+FFFD in place of whatever the client meant.
 */
export function acceptStrictJson(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new AppError('bad_request', 'The body is not UTF-8'), undefined);
      return;
    }
    parseJson(request, text, done);
  });
}
