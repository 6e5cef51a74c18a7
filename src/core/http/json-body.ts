// Request bodies at the edge, before anything reads them: JSON nested deeper than MAX_JSON_DEPTH is
// refused while it is still text (a linear scan, no recursion), so no later walk over the parsed
// value can exhaust the stack; and a body sent with a Content-Encoding other than `identity` is
// refused (415), since nothing here decodes one and reading compressed bytes as JSON is never
// what the sender meant.

import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.ts';

/** The deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON `text` nests arrays and objects deeper than `max`: counts brackets outside strings,
 * one pass, constant memory. Malformed text is left to the parser to refuse.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Installs the depth bound on JSON bodies and the refusal of encoded bodies on `fastify`. */
export function guardRequestBodies(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, raw, done) => {
    const body = typeof raw === 'string' ? raw : raw.toString('utf8');
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
      done(
        new AppError(
          'INVALID_REQUEST',
          `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
          {
            remediation: `Flatten the body to at most ${MAX_JSON_DEPTH} levels of nesting; nothing was done.`,
          },
        ),
        undefined,
      );
      return;
    }
    parseJson(req, body, done);
  });
  fastify.addHook('preParsing', async (req) => {
    const encoding = req.headers['content-encoding'];
    const hasBody =
      req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (encoding === undefined || !hasBody) return;
    const codings = (Array.isArray(encoding) ? encoding.join(',') : encoding)
      .split(',')
      .map((c) => c.trim().toLowerCase())
      .filter((c) => c !== '' && c !== 'identity');
    if (codings.length === 0) return;
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding ${codings.join(', ')} is not supported: request bodies are read as sent.`,
      { remediation: 'Send the body uncompressed, without a Content-Encoding header; nothing was done.' },
    );
  });
}
