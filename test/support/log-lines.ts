// A logger as the service builds it (its level, its redaction) whose lines a test reads back,
// parsed, instead of stdout.

import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/core/log.ts';

export function capturedLog(level = 'info'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}
