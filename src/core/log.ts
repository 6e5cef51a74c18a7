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
 * The service's logger: JSON lines to stdout (1), to stderr (2: a command whose stdout is its
 * answer), or to `destination` (a test's sink). A file descriptor is written asynchronously: a
 * line is queued and the lines queued meanwhile go out together in one write, so a busy request
 * path never waits on the pipe; what is queued is flushed on exit.
 */
export function createLogger(level: string, destination: DestinationStream | 1 | 2 = 1): Logger {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'purser' },
  };
  return pino(
    options,
    typeof destination === 'number' ? pinoDestination({ dest: destination, sync: false }) : destination,
  );
}
