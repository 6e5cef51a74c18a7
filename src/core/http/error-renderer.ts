import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { PurserEnv } from '../settings.ts';
import { isDatabaseUnavailable } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';
import { ERROR_CODES, type ErrorCode, type NextStep } from '../errors/codes.ts';
import { newId } from '../ids.ts';
import { describeValidationErrors } from './validation.ts';
import { noteErrorCode } from './request-log.ts';

/**
 * What rendering an error needs to know of the deployment: the public URL (docs_url) and, for the
 * default next steps, the environment (development-only routes) and the chain top-ups pay on.
 * A bare public URL renders as production (no development-only step).
 */
export interface ErrorRenderConfig {
  publicUrl: string;
  env: PurserEnv;
  payments: { chainId: number };
}
type RenderTarget = string | ErrorRenderConfig;

const CHAIN_NAMES: Record<number, string> = { 8453: 'Base', 84532: 'Base Sepolia', 137: 'Polygon' };

const publicUrlOf = (target: RenderTarget) => (typeof target === 'string' ? target : target.publicUrl);

/** "chain 8453 (Base)": how a next step names the chain top-ups pay on. */
export function describeChain(chainId: number): string {
  const name = CHAIN_NAMES[chainId];
  return name ? `chain ${chainId} (${name})` : `chain ${chainId}`;
}

/**
 * The default next steps of a code in this deployment (empty when the table gives none):
 * development-only steps are dropped outside development, and the payments chain is named.
 */
export function defaultNextSteps(code: ErrorCode, target: RenderTarget): NextStep[] {
  const info = ERROR_CODES[code];
  if (!('next' in info)) return [];
  const development = typeof target !== 'string' && target.env === 'development';
  const chain = typeof target === 'string' ? 'the payments chain' : describeChain(target.payments.chainId);
  return info.next
    .filter((step) => step.onlyIn === undefined || (step.onlyIn === 'development' && development))
    .map(({ method, path, why }) => ({ method, path, why: why.replaceAll('{payments_chain}', chain) }));
}

/**
 * The `next` of an error: the raiser's (`[]` meaning none), else the methods a 405's Allow header
 * names on the same path, else the code's default.
 */
export function nextStepsOf(err: AppError, target: RenderTarget, path?: string): NextStep[] {
  if (err.next !== undefined) return err.next;
  const allow = err.headers['allow'];
  if (err.code === 'METHOD_NOT_ALLOWED' && allow && path) {
    return allow
      .split(',')
      .map((m) => m.trim())
      .filter((m): m is NextStep['method'] => ['GET', 'POST', 'PUT', 'DELETE'].includes(m))
      .map((method) => ({ method, path, why: `${method} is what this path accepts` }));
  }
  return defaultNextSteps(err.code, target);
}

export interface ErrorBody {
  code: string;
  message: string;
  remediation: string;
  docs_url: string;
  request_id: string;
  next?: { method: string; path: string; why: string }[];
}

/** The anchor of a code in the served error table. */
export function docsUrlFor(publicUrl: string, code: string): string {
  return `${publicUrl}/docs/errors#${code}`;
}

export function errorBody(err: AppError, requestId: string, target: RenderTarget, path?: string): ErrorBody {
  const body: ErrorBody = {
    code: err.code,
    message: err.message,
    remediation: err.remediation,
    docs_url: docsUrlFor(publicUrlOf(target), err.code),
    request_id: requestId,
  };
  const next = nextStepsOf(err, target, path);
  if (next.length > 0) body.next = next;
  return body;
}

/** Maps anything thrown while handling a request to the AppError the client sees. */
export function toAppError(err: unknown, bodyLimit: number): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError & { validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    return new AppError(
      'INVALID_REQUEST',
      describeValidationErrors(fe.validation as never, fe.validationContext ?? 'request'),
    );
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('INVALID_REQUEST', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('INVALID_REQUEST', 'The request declares a JSON body but sends none.', {
        remediation: 'Send a JSON object, or omit the Content-Type header when there is no body.',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', `The request body exceeds ${bodyLimit} bytes.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json.');
    default:
      break;
  }
  if (fe instanceof SyntaxError && fe.statusCode === 400) {
    return new AppError('INVALID_REQUEST', 'The request body is not valid JSON.');
  }
  if (isDatabaseUnavailable(err)) {
    return new AppError(
      'UNAVAILABLE',
      'The database is unreachable or has no free connection; nothing was changed.',
      {
        remediation: 'Retry in a few seconds with the same Idempotency-Key.',
        headers: { 'retry-after': '2' },
        cause: err,
      },
    );
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return frameworkRefusal(fe.statusCode, fe.message);
  }
  return new AppError('INTERNAL', 'An unexpected error occurred.', { cause: err });
}

/** The table's code for a status a framework layer or plugin answers with. */
const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'INVALID_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/**
 * A 4xx that a framework layer or plugin (the static files of /docs) raised without a code: the
 * table's code of that status, or INVALID_REQUEST keeping the status (412, 416…). The status stays
 * what HTTP says; the remediation never claims a field is wrong when none is.
 */
function frameworkRefusal(status: number, message: string): AppError {
  const code = CODE_BY_STATUS[status] ?? 'INVALID_REQUEST';
  const reason = STATUS_CODES[status] ?? 'Client error';
  const generic = !message || message === reason;
  return new AppError(code, generic ? `The request was refused: ${status} ${reason}.` : message, {
    status,
    ...(code === 'INVALID_REQUEST' || code === 'FORBIDDEN'
      ? {
          remediation:
            status === 416
              ? 'Ask for a byte range inside the resource, or send no Range header.'
              : status === 412
                ? 'Send no precondition header (If-Match, If-Unmodified-Since), or one the resource meets.'
                : 'Check the path and headers against the API reference at /docs.',
          next: [],
        }
      : {}),
  });
}

export function sendError(
  reply: FastifyReply,
  req: FastifyRequest,
  err: AppError,
  target: RenderTarget,
): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  noteErrorCode(req, err.code);
  const path = req.url.split('?')[0];
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(err, req.id, target, path)));
}

/**
 * The answer to a request Node's HTTP parser refused before Fastify saw it (headers too large,
 * malformed HTTP, a request that timed out): the error body on a closing connection, with a fresh
 * request id, instead of Fastify's own `{error, message, statusCode}`.
 */
export function clientErrorHandler(target: RenderTarget) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, message, remediation] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request headers exceed the size limit.', 'Send fewer or smaller headers.']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'The request was not received in time.', 'Send the whole request promptly, then retry.']
          : [400, 'The request is not valid HTTP.', 'Send a well-formed HTTP/1.1 request.'];
    const requestId = newId('req');
    const appError = new AppError('INVALID_REQUEST', message, { status, remediation, next: [] });
    const body = JSON.stringify(errorBody(appError, requestId, target));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}
