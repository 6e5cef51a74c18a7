// One log line per request, written when the answer has gone out: method, path, status, time
// and, for an error, its code from the spec's error body. (Fastify's own request logging writes
// two lines per request and neither names the error.) The line where a request starts is kept
// at debug level, for following requests in flight.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics } from '../metrics.ts';

const errorCodes = new WeakMap<FastifyRequest, string>();

/** Remembers the error code a request was answered with, for its request line. */
export function noteErrorCode(req: FastifyRequest, code: string): void {
  errorCodes.set(req, code);
}

/** Writes the request line and, with `metrics`, counts the request by its route's pattern. */
export function logRequests(fastify: FastifyInstance, metrics?: Metrics): void {
  fastify.addHook('onRequest', (req, _reply, done) => {
    req.log.debug({ req: { method: req.method, url: req.url } }, 'incoming request');
    done();
  });
  fastify.addHook('onResponse', (req, reply, done) => {
    const code = errorCodes.get(req);
    metrics?.observeRequest(
      req.method,
      req.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      code ?? '',
      reply.elapsedTime / 1000,
    );
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
