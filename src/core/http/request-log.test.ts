// Each request writes one log line when it has been answered: method, path, status and time,
// and for an error the code of the spec's error body; nothing of the request's credentials.
// Each committed domain event writes one line of its own (none when its transaction rolled
// back), and an operator's switch flip is a line too. A request whose events' lines tell what it
// did (a feature request paid from the prepaid balance) writes no request line of its own.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { capturedLog } from '../../../test/support/log-lines.ts';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
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

  it("tells a paid feature request by its events' lines alone; its replay and a refusal have request lines", async () => {
    const user = await createAccountWithSession(t.db.db);
    await fundPrepaid(t.db.db, t.deps.clock, user.accountId, 1_000_000n);
    const post = (key?: string) =>
      t.app.fastify.inject({
        method: 'POST',
        url: '/v1/feedback',
        headers: { ...bearer(user.sessionToken), ...(key ? { 'idempotency-key': key } : {}) },
        payload: { title: 'Fewer log lines', body: 'One line tells one request.' },
      });
    const paid = await post('told-by-its-events');
    expect(paid.statusCode, paid.body).toBe(201);
    const replay = await post('told-by-its-events');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // The balance is spent: refused, with its error code on its request line.
    const refused = await post();
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    await new Promise((r) => setImmediate(r));

    expect(requestLines(String(paid.headers['x-request-id']))).toEqual([]);
    const told = lines.filter(
      (l) =>
        l['account_id'] === user.accountId &&
        ['feedback.created', 'balance.debited'].includes(String(l['event'])),
    );
    expect(told.map((l) => l['event']).sort()).toEqual(['balance.debited', 'feedback.created']);
    expect(told.find((l) => l['event'] === 'feedback.created')).toMatchObject({
      subject: paid.json<{ id: string }>().id,
    });
    expect(requestLines(String(replay.headers['x-request-id']))).toMatchObject([
      { msg: 'request completed', res: { statusCode: 201 } },
    ]);
    const completed = (id: unknown) =>
      requestLines(String(id)).filter((l) => l['msg'] === 'request completed');
    expect(completed(refused.headers['x-request-id'])).toMatchObject([
      { res: { statusCode: refused.statusCode }, code: refused.json<{ code: string }>().code },
    ]);
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
