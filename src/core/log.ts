import { pino, type Logger } from 'pino';

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

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'purser' },
  });
}
