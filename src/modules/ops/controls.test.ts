// Operator controls beyond billing: a feature request's status (shown on GET /v1/feedback at
// once, audited on the requester's account), and `purser ops` for switches and feature requests.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { REPO_ROOT, serviceEnv } from '../../../test/support/service-process.ts';
import { systemClock } from '../../core/clock.ts';
import { newId } from '../../core/ids.ts';
import { insertFeatureRequest } from '../feedback/index.ts';
import { setSwitch } from '../switches/index.ts';

const OPERATOR_TOKEN = 'op_'.padEnd(40, 'c');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ config: { operatorToken: OPERATOR_TOKEN } });
});
afterAll(async () => {
  await t?.close();
});

const putStatus = (id: string, payload: object, token = OPERATOR_TOKEN) =>
  t.app.fastify.inject({
    method: 'PUT',
    url: `/v1/ops/feature-requests/${id}`,
    headers: bearer(token),
    payload,
  });

async function newRequest(accountId: string): Promise<string> {
  const id = newId('fr');
  const now = new Date();
  await insertFeatureRequest(t.db.db, {
    id,
    account_id: accountId,
    title: `Request ${id}`,
    body: 'A body that is never published anywhere.',
    status: 'open',
    created_at: now,
    updated_at: now,
  });
  return id;
}

const listed = async (id: string) =>
  (
    (await t.app.fastify.inject({ method: 'GET', url: '/v1/feedback' })).json().requests as Array<{
      id: string;
      status: string;
    }>
  ).find((r) => r.id === id);

describe('PUT /v1/ops/feature-requests/{id}', () => {
  it('changes the status shown on GET /v1/feedback, with an audit fact on the requester', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const id = await newRequest(acc.accountId);
    expect((await listed(id))?.status).toBe('open');

    const res = await putStatus(id, { status: 'planned' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'planned', previous_status: 'open' });
    expect((await listed(id))?.status).toBe('planned');
    await putStatus(id, { status: 'shipped' });
    expect((await listed(id))?.status).toBe('shipped');

    const facts = await t.db.db
      .selectFrom('audit_log')
      .select(['account_id', 'actor', 'subject', 'details'])
      .where('action', '=', 'ops.feature_request_status')
      .where('subject', '=', id)
      .orderBy('seq')
      .execute();
    expect(facts).toEqual([
      { account_id: acc.accountId, actor: 'operator', subject: id, details: { from: 'open', to: 'planned' } },
      {
        account_id: acc.accountId,
        actor: 'operator',
        subject: id,
        details: { from: 'planned', to: 'shipped' },
      },
    ]);
    const exported = (
      await t.app.fastify.inject({
        method: 'GET',
        url: '/v1/account/export',
        headers: bearer(acc.sessionToken),
      })
    ).json();
    expect(
      (exported.audit_log as Array<{ actor: string; action: string }>).filter(
        (a) => a.actor === 'operator' && a.action === 'ops.feature_request_status',
      ),
    ).toHaveLength(2);
  });

  it('404 for an unknown id, 400 for a bad status, 401 for an account credential; nothing changes', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const id = await newRequest(acc.accountId);
    expectErrorBody(await putStatus('fr_nobody', { status: 'planned' }), 404, 'NOT_FOUND');
    const bad = expectErrorBody(await putStatus(id, { status: 'done' }), 400, 'INVALID_REQUEST');
    expect(bad.message).toContain('status');
    expectErrorBody(await putStatus(id, {}), 400, 'INVALID_REQUEST');
    expectErrorBody(await putStatus(id, { status: 'planned', note: 'x' }), 400, 'INVALID_REQUEST');
    expectErrorBody(await putStatus(id, { status: 'planned' }, acc.sessionToken), 401, 'UNAUTHORIZED');
    expect((await listed(id))?.status).toBe('open');
    const facts = await t.db.db
      .selectFrom('audit_log')
      .select('id')
      .where('action', '=', 'ops.feature_request_status')
      .where('subject', 'in', [id, 'fr_nobody'])
      .execute();
    expect(facts).toEqual([]);
  });
});

describe('purser ops (command line)', () => {
  it.skipIf(!process.env.DATABASE_URL)(
    'switches a venue and an account off and on, lists switches, sets a feature request status',
    async () => {
      const url = t.database.url;
      if (!url) return;
      const acc = await createAccountWithSession(t.db.db);
      const id = await newRequest(acc.accountId);
      const run = (args: string[]) =>
        promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'ops', ...args], {
          cwd: REPO_ROOT,
          env: serviceEnv({ DATABASE_URL: url }),
        });
      const jsonOf = (stdout: string) => JSON.parse(stdout.slice(stdout.indexOf('{')));

      const off = await run(['switch', 'off', 'venue', 'kyberswap', 'Router', 'upgrade']);
      expect(jsonOf(off.stdout)).toMatchObject({
        scope: 'venue',
        target: 'kyberswap',
        enabled: false,
        reason: 'Router upgrade',
      });
      const list = jsonOf((await run(['switches'])).stdout);
      expect(list.switches).toEqual([
        expect.objectContaining({ scope: 'venue', target: 'kyberswap', reason: 'Router upgrade' }),
      ]);
      expect(jsonOf((await run(['switch', 'on', 'venue', 'kyberswap'])).stdout).enabled).toBe(true);
      // An account by its address.
      await run(['switch', 'off', 'account', acc.address, 'Abuse report']);
      expect(
        await t.db.db.selectFrom('execution_switches').select(['scope', 'target', 'reason']).execute(),
      ).toEqual([{ scope: 'account', target: acc.accountId, reason: 'Abuse report' }]);
      await setSwitch(t.db.db, systemClock, { scope: 'account', target: acc.accountId, enabled: true }, null);

      const fr = await run(['feature-request', id, 'declined']);
      expect(fr.stdout).toContain('open -> declined');
      expect((await listed(id))?.status).toBe('declined');

      await expect(run(['switch', 'off', 'venue', 'mtgox', 'why'])).rejects.toMatchObject({ code: 64 });
      expect(await t.db.db.selectFrom('execution_switches').selectAll().execute()).toEqual([]);

      const facts = await t.db.db
        .selectFrom('audit_log')
        .select(['account_id', 'action'])
        .where('actor', '=', 'operator')
        .where('action', 'in', ['ops.switch_off', 'ops.switch_on'])
        .orderBy('seq')
        .execute();
      expect(facts.filter((f) => f.account_id === acc.accountId).map((f) => f.action)).toEqual([
        'ops.switch_off',
        'ops.switch_on',
      ]);
    },
    180_000,
  );
});
