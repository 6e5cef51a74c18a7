import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';
import { describeValidationErrors } from './validation.ts';

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

export function errorBody(err: AppError, requestId: string, publicUrl: string): ErrorBody {
  const body: ErrorBody = {
    code: err.code,
    message: err.message,
    remediation: err.remediation,
    docs_url: docsUrlFor(publicUrl, err.code),
    request_id: requestId,
  };
  if (err.next && err.next.length > 0) body.next = err.next;
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
    return new AppError('INVALID_REQUEST', fe.message || 'The request is invalid.', {
      status: fe.statusCode,
    });
  }
  return new AppError('INTERNAL', 'An unexpected error occurred.', { cause: err });
}

export function sendError(
  reply: FastifyReply,
  req: FastifyRequest,
  err: AppError,
  publicUrl: string,
): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(err, req.id, publicUrl)));
}
