// One log line per request, written when the answer has gone out: method, path, status, time
// and, for an error, its code from the spec's error body; none for a request whose domain events'
// lines tell what it did (an intent's admission, a paid feature request: `toldByEventLine`).
// (Fastify's own request logging writes two lines per request and neither names the error.) The
// line where a request starts is kept at debug level, for following requests in flight.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics } from '../metrics.ts';

const errorCodes = new WeakMap<FastifyRequest, string>();
const toldByEvent = new WeakSet<FastifyRequest>();

/** Remembers the error code a request was answered with, for its request line. */
export function noteErrorCode(req: FastifyRequest, code: string): void {
  errorCodes.set(req, code);
}

/**
 * Says that a domain event's line tells what the request did (an intent admitted): its request line
 * is not written when it succeeds, so the hot path writes one line, not two. It is still counted.
 */
export function toldByEventLine(req: FastifyRequest): void {
  toldByEvent.add(req);
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
    if (reply.statusCode < 400 && toldByEvent.has(req)) return done();
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
