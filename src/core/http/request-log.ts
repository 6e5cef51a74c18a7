// One log line per request, written when the answer has gone out: method, path, status, time
// and, for an error, its code from the spec's error body. (Fastify's own request logging writes
// two lines per request and neither names the error.) The line where a request starts is kept
// at debug level, for following requests in flight.

import type { FastifyInstance, FastifyRequest } from 'fastify';

const errorCodes = new WeakMap<FastifyRequest, string>();

/** Remembers the error code a request was answered with, for its request line. */
export function noteErrorCode(req: FastifyRequest, code: string): void {
  errorCodes.set(req, code);
}

export function logRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (req, _reply, done) => {
    req.log.debug({ req: { method: req.method, url: req.url } }, 'incoming request');
    done();
  });
  fastify.addHook('onResponse', (req, reply, done) => {
    const code = errorCodes.get(req);
    req.log.info(
      {
        req: { method: req.method, url: req.url },
        res: { statusCode: reply.statusCode },
        responseTime: Math.round(reply.elapsedTime * 10) / 10,
        ...(code ? { code } : {}),
      },
      'request completed',
    );
    done();
  });
}
