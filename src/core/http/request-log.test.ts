// Each request writes one log line when it has been answered: method, path, status and time,
// and for an error the code of the spec's error body; nothing of the request's credentials.

import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { REDACTED_PATHS } from '../log.ts';

const lines: Record<string, unknown>[] = [];
let t: TestApp;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const log = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
  t = await createTestApp({ deps: { log } });
});
afterAll(async () => {
  await t?.close();
});

const requestLines = (id: string) => lines.filter((l) => l['reqId'] === id);

describe('request lines', () => {
  it('writes one line per answered request, with the error code of a 4xx', async () => {
    const ok = await t.app.fastify.inject({ method: 'GET', url: '/v1/tokens?chain_id=8453' });
    expect(ok.statusCode).toBe(200);
    const missing = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/intents/00000000-0000-4000-8000-000000000000',
      headers: { authorization: 'Bearer pss_not_a_real_token_0123456789' },
    });
    expect(missing.statusCode).toBe(401);
    const unknown = await t.app.fastify.inject({ method: 'GET', url: '/v1/nowhere' });
    expect(unknown.statusCode).toBe(404);

    const [okLine, ...okRest] = requestLines(String(ok.headers['x-request-id']));
    expect(okRest).toEqual([]);
    expect(okLine).toMatchObject({
      msg: 'request completed',
      req: { method: 'GET', url: '/v1/tokens?chain_id=8453' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    expect(okLine).not.toHaveProperty('code');

    const [deniedLine, ...deniedRest] = requestLines(String(missing.headers['x-request-id']));
    expect(deniedRest).toEqual([]);
    expect(deniedLine).toMatchObject({
      res: { statusCode: 401 },
      code: missing.json<{ code: string }>().code,
    });
    expect(JSON.stringify(deniedLine)).not.toContain('pss_not_a_real_token');

    const [unknownLine] = requestLines(String(unknown.headers['x-request-id']));
    expect(unknownLine).toMatchObject({ res: { statusCode: 404 }, code: 'NOT_FOUND' });
    // The start of a request is a debug line: at info, nothing but the one line per request.
    expect(lines.filter((l) => l['msg'] === 'incoming request')).toEqual([]);
  });
});
