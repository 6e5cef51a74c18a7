import { destination as pinoDestination, pino, type DestinationStream, type Logger } from 'pino';

/** Header and field names whose values never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-payment"]',
  'req.headers["payment-signature"]',
  'req.headers.cookie',
  '*.token',
  '*.secret',
  '*.signature',
  '*.private_key',
  '*.privateKey',
  '*.sealingKey',
  '*.sealingKeys',
  '*.keyring',
  '*.operatorToken',
  '*.databaseUrl',
  'config',
];

/**
 * The service's logger: JSON lines to stdout, or to `destination` (a test's sink). Stdout is
 * written asynchronously: a line is queued and the lines queued meanwhile go out together in one
 * write, so a busy request path never waits on the pipe; what is queued is flushed on exit.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'purser' },
  };
  return pino(options, destination ?? pinoDestination({ dest: 1, sync: false }));
}
