// Each request writes one log line when it has been answered: method, path, status and time,
// and for an error the code of the spec's error body; nothing of the request's credentials.
// Each committed domain event writes one line of its own (none when its transaction rolled
// back), and an operator's switch flip is a line too.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { capturedLog } from '../../../test/support/log-lines.ts';
import { emitEvent } from '../../modules/events/index.ts';
import { withTransaction } from '../db/database.ts';

const { log, lines } = capturedLog();
const OPERATOR_TOKEN = 'op_'.padEnd(40, 'l');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ deps: { log }, config: { operatorToken: OPERATOR_TOKEN } });
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

  it('writes one line per committed domain event, none for one rolled back, and one per switch flip', async () => {
    const user = await createAccountWithSession(t.db.db);
    const made = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: bearer(user.sessionToken),
      payload: { name: 'logged' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const key = made.json<{ id: string; token: string }>();
    await expect(
      withTransaction(t.db.db, async (tx) => {
        await emitEvent(tx, t.deps.clock, {
          accountId: user.accountId,
          kind: 'test.rolled_back',
          payload: { n: 1 },
        });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const flip = await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/ops/switches',
      headers: bearer(OPERATOR_TOKEN),
      payload: { scope: 'environment', enabled: false, reason: 'a log line test' },
    });
    expect(flip.statusCode, flip.body).toBe(200);
    await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/ops/switches',
      headers: bearer(OPERATOR_TOKEN),
      payload: { scope: 'environment', enabled: true },
    });
    await new Promise((r) => setImmediate(r));

    const created = lines.filter((l) => l['event'] === 'key.created' && l['account_id'] === user.accountId);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ level: 30, msg: 'key.created', subject: key.id });
    expect(created[0]?.['event_id']).toMatch(/^evt_/);
    expect(JSON.stringify(created[0])).not.toContain(key.token);
    expect(lines.filter((l) => l['event'] === 'test.rolled_back')).toEqual([]);
    const flips = lines.filter((l) => l['event'] === 'switch.flipped');
    expect(flips.map((l) => [l['level'], l['scope'], l['enabled']])).toEqual([
      [40, 'environment', false],
      [30, 'environment', true],
    ]);
    expect(flips[0]).toMatchObject({ reason: 'a log line test', reqId: flip.headers['x-request-id'] });
  });
});
