import { pino, type DestinationStream, type Logger } from 'pino';

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

/** The service's logger: JSON lines to stdout, or to `destination` (a test's sink). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'purser' },
  };
  return destination ? pino(options, destination) : pino(options);
}
