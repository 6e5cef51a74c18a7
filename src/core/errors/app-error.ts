import { ERROR_CODES, type ErrorCode, type NextStep } from './codes.ts';

export type { NextStep } from './codes.ts';

export interface AppErrorOptions {
  status?: number;
  remediation?: string;
  /**
   * What the caller can do next. Omitted: the code's default from the error table. `[]`: no next
   * step here, even where the code has a default (say why in the remediation).
   */
  next?: NextStep[];
  headers?: Record<string, string>;
  cause?: unknown;
}

/** Every error a client sees. The message is safe to show; never put a secret in it. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly remediation: string;
  readonly next: NextStep[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.remediation = options.remediation ?? ERROR_CODES[code].remediation;
    this.next = options.next;
    this.headers = options.headers ?? {};
  }
}

export const invalidRequest = (message: string, options?: AppErrorOptions) =>
  new AppError('INVALID_REQUEST', message, options);
export const notFound = (message = 'Not found.', options?: AppErrorOptions) =>
  new AppError('NOT_FOUND', message, options);
export const unavailable = (message: string, options?: AppErrorOptions) =>
  new AppError('UNAVAILABLE', message, options);
