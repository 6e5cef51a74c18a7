// A body that is not JSON, on any route that takes one, is 415 UNSUPPORTED_MEDIA_TYPE with the
// error body, and nothing runs: the real routes of the table, not a probe.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { expectErrorBody } from './support/error-body.ts';
import { bearer, createAccountWithSession, type AccountWithSession } from './support/identity.ts';

let t: TestApp;
let acct: AccountWithSession;
beforeAll(async () => {
  t = await createTestApp();
  acct = await createAccountWithSession(t.db.db);
});
afterAll(async () => {
  await t?.close();
});

const screening = '{"address":"0x0000000000000000000000000000000000000001"}';

describe('a body in another media type', () => {
  it.each([
    ['text/plain', screening],
    ['application/x-www-form-urlencoded', 'address=0x0000000000000000000000000000000000000001'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="address"\r\n\r\n0x1\r\n--x--',
    ],
    ['application/xml', '<address>0x1</address>'],
    ['application/octet-stream', screening],
    ['application/jsonx', screening],
    [undefined, screening],
  ])('%s on POST /v1/screenings is 415 with the error body', async (contentType, payload) => {
    const res = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/screenings',
      payload,
      headers: contentType ? { 'content-type': contentType } : {},
    });
    expect(expectErrorBody(res, 415, 'UNSUPPORTED_MEDIA_TYPE').message).toContain('application/json');
  });

  it('on a route whose body is optional, the panic switch records no panic', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await t.app.fastify.inject({
        method: 'POST',
        url: '/v1/account/panic',
        payload: 'reason=stop',
        headers: { ...bearer(acct.sessionToken), 'content-type': contentType },
      });
      expectErrorBody(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    const switches = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM execution_switches`.execute(t.db.db);
    expect(switches.rows[0]?.n).toBe(0);
  });

  it('JSON with parameters or in another letter case is still JSON', async () => {
    for (const contentType of ['application/json; charset=utf-8', 'Application/JSON']) {
      const res = await t.app.fastify.inject({
        method: 'POST',
        url: '/v1/screenings',
        payload: screening,
        headers: { 'content-type': contentType },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
});
