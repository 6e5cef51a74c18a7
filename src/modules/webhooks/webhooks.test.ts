import { testConfig } from '../../config.ts';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { keyringOf, webhookSecretContext } from '../../core/sealing.ts';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession, createKey } from '../../../test/support/identity.ts';
import { ManualClock } from '../../core/clock.ts';
import { createLogger } from '../../core/log.ts';
import { emitEvent } from '../events/index.ts';
import { checkResolvedDestination, parseDestination, refusedAddressReason } from './destination.ts';
import {
  createWebhookDispatcher,
  MAX_DELIVERY_ATTEMPTS,
  RETRY_SCHEDULE_SECONDS,
  type WebhookDispatcherParameters,
} from './dispatcher.ts';

const TOLERANCE_SECONDS = 300;
const clock = new ManualClock(new Date());
const log = createLogger('silent');

/** A receiver as the docs describe it: verifies timestamp and signature, dedupes on the event id. */
interface Receiver {
  url: string;
  mode: 'up' | 'down';
  secret: string;
  received: { id: string; kind: string; data: unknown }[];
  rejected: string[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    mode: 'up',
    secret: '',
    received: [],
    rejected: [],
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (receiver.mode === 'down') {
        res.writeHead(503).end();
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      const eventId = String(req.headers['x-service-event-id'] ?? '');
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['x-service-signature'] ?? ''));
      const now = Math.floor(clock.now().getTime() / 1000);
      if (!match?.[1] || !match[2] || Math.abs(now - Number(match[1])) > TOLERANCE_SECONDS) {
        receiver.rejected.push(`bad header or stale timestamp: ${eventId}`);
        res.writeHead(400).end();
        return;
      }
      const expected = createHmac('sha256', receiver.secret).update(`${match[1]}.${eventId}.${raw}`).digest();
      if (!timingSafeEqual(expected, Buffer.from(match[2], 'hex'))) {
        receiver.rejected.push(`bad signature: ${eventId}`);
        res.writeHead(400).end();
        return;
      }
      const body = JSON.parse(raw) as { id: string; kind: string; data: unknown; created_at: string };
      if (body.id !== eventId) receiver.rejected.push(`event id header mismatch: ${eventId}`);
      if (!receiver.received.some((r) => r.id === body.id)) {
        receiver.received.push({ id: body.id, kind: body.kind, data: body.data });
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await createTestApp({ clock });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});
afterEach(() => {
  receiver.mode = 'up';
});

/** A dispatcher's log lines and settled deliveries as it reports them. */
function recorded() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const settled: { outcome: string; kind: string; seconds: number }[] = [];
  const line = (level: string) => (fields: object, msg: string) =>
    lines.push({ level, msg, fields: fields as Record<string, unknown> });
  return {
    lines,
    settled,
    log: { info: line('info'), warn: line('warn'), error: line('error') },
    observe: (outcome: string, kind: string, seconds: number) => settled.push({ outcome, kind, seconds }),
  };
}

function dispatcher(overrides: Partial<WebhookDispatcherParameters> = {}) {
  return createWebhookDispatcher({
    db: t.db.db,
    clock,
    log,
    keyring: keyringOf(testConfig().sealingKeys),
    production: false,
    ...overrides,
  });
}

/** An account with an admin key (sessions expire after a day; the schedule runs for three). */
async function accountWithEndpoint() {
  const account = await createAccountWithSession(t.db.db);
  const key = await createKey(t.db.db, account.accountId, {
    scopes: ['admin'],
    expiresAt: new Date(clock.now().getTime() + 30 * 86_400_000),
  });
  const headers = bearer(key.token);
  const put = await t.app.fastify.inject({
    method: 'PUT',
    url: '/v1/webhooks/endpoint',
    headers,
    payload: { url: receiver.url },
  });
  expect(put.statusCode).toBe(200);
  const secret = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/secret', headers });
  expect(secret.statusCode).toBe(200);
  receiver.secret = (secret.json() as { secret: string }).secret;
  return { ...account, headers };
}

async function emit(accountId: string, n: number, kind = 'test.happened'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      await t.db.db
        .transaction()
        .execute((tx) => emitEvent(tx, clock, { accountId, kind, subject: `s_${i}`, payload: { n: i } })),
    );
  }
  return ids;
}

describe('webhook secret and endpoint', () => {
  it('returns the same secret every time, sealed at rest and bound to the account', async () => {
    const { accountId, headers } = await accountWithEndpoint();
    const again = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/secret', headers });
    expect((again.json() as { secret: string }).secret).toBe(receiver.secret);
    expect(receiver.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const row = await t.db.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(receiver.secret);
    const ring = keyringOf(t.deps.config.sealingKeys);
    expect(row.secret_sealed!.startsWith(ring.currentPrefix())).toBe(true);
    expect(ring.open(webhookSecretContext(accountId), row.secret_sealed!)).toBe(receiver.secret);
    expect(() => ring.open(webhookSecretContext('acc_other'), row.secret_sealed!)).toThrow();
  });

  it('needs admin scope for the endpoint and the secret, read for failures and events', async () => {
    const { accountId } = await createAccountWithSession(t.db.db);
    const read = bearer((await createKey(t.db.db, accountId, { scopes: ['read'] })).token);
    const put = await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/webhooks/endpoint',
      headers: read,
      payload: { url: receiver.url },
    });
    expectErrorBody(put, 403, 'FORBIDDEN');
    const secret = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: read });
    expectErrorBody(secret, 403, 'FORBIDDEN');
    const failures = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/webhooks/failures',
      headers: read,
    });
    expect(failures.json()).toEqual({ failures: [], next_cursor: null });
  });

  it('refuses http and private, loopback and link-local targets in production, naming why', async () => {
    const production = { production: true };
    expect(() => parseDestination('http://example.com/hook', production)).toThrow(/https in production/);
    expect(() => parseDestination('https://127.0.0.1/hook', production)).toThrow(/loopback/);
    expect(() => parseDestination('https://[::1]/hook', production)).toThrow(/loopback/);
    expect(() => parseDestination('https://10.1.2.3/hook', production)).toThrow(/private/);
    expect(() => parseDestination('https://192.168.0.10/hook', production)).toThrow(/private/);
    expect(() => parseDestination('https://169.254.169.254/latest', production)).toThrow(/link-local/);
    expect(() => parseDestination('https://localhost/hook', production)).toThrow(/loopback/);
    expect(refusedAddressReason('::ffff:10.0.0.1')).toMatch(/private/);
    expect(refusedAddressReason('fe80::1')).toMatch(/link-local/);
    expect(refusedAddressReason('93.184.216.34')).toBeNull();
    expect(parseDestination('https://example.com/hook', production).toString()).toBe(
      'https://example.com/hook',
    );
    // After DNS resolution: a name that resolves to loopback is refused too.
    await expect(checkResolvedDestination(new URL('https://localhost/hook'))).rejects.toThrow(/loopback/);
    // Development admits the loopback http receiver the tests use.
    expect(parseDestination(receiver.url, { production: false }).protocol).toBe('http:');

    const prod = await createTestApp({
      clock,
      config: { env: 'production', sealingKeys: [{ id: 'k1', key: '22'.repeat(32) }] },
    });
    {
      try {
        const { accountId, sessionToken } = await createAccountWithSession(prod.db.db);
        void accountId;
        const res = await prod.app.fastify.inject({
          method: 'PUT',
          url: '/v1/webhooks/endpoint',
          headers: bearer(sessionToken),
          payload: { url: 'http://127.0.0.1:9/hook' },
        });
        expect(expectErrorBody(res, 400, 'INVALID_REQUEST').message).toMatch(/https/);
        const res2 = await prod.app.fastify.inject({
          method: 'PUT',
          url: '/v1/webhooks/endpoint',
          headers: bearer(sessionToken),
          payload: { url: 'https://10.0.0.7/hook' },
        });
        expect(expectErrorBody(res2, 400, 'INVALID_REQUEST').message).toMatch(/private/);
      } finally {
        await prod.close();
      }
    }
  });

  it('a production dispatcher refuses a private target at delivery time', async () => {
    const { accountId } = await accountWithEndpoint();
    await sql`UPDATE webhook_endpoints SET url = 'https://127.0.0.1:1/hook' WHERE account_id = ${accountId}`.execute(
      t.db.db,
    );
    const [id] = await emit(accountId, 1);
    await dispatcher({ production: true }).drain();
    const row = await t.db.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', id!)
      .executeTakeFirstOrThrow();
    expect(row.state).toBe('pending');
    expect(row.last_error).toMatch(/destination refused: 127.0.0.1 is a loopback address/);
    // Settle it, so the counts of the tests below see only their own deliveries.
    await sql`UPDATE webhook_deliveries SET state = 'delivered' WHERE event_id = ${id!}`.execute(t.db.db);
  });
});

describe('webhook delivery', () => {
  it('delivers every event signed, with the event id header, once', async () => {
    const { accountId, headers } = await accountWithEndpoint();
    const ids = await emit(accountId, 3);
    // A real emitter too: creating a key through the API emits key.created.
    const created = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/keys',
      headers,
      payload: { scopes: ['read'] },
    });
    expect(created.statusCode).toBe(201);
    const seen = recorded();
    const d = dispatcher({ log: seen.log, observe: seen.observe });
    expect(await d.drain()).toBe(4);
    expect(await d.drain()).toBe(0);
    expect(receiver.rejected).toEqual([]);
    const mine = receiver.received.filter((r) => ids.includes(r.id));
    expect(mine.map((r) => r.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(receiver.received.some((r) => r.kind === 'key.created')).toBe(true);
    const states = await t.db.db
      .selectFrom('webhook_deliveries')
      .select(['state', 'attempts'])
      .where('account_id', '=', accountId)
      .execute();
    expect(states).toHaveLength(4);
    expect(states.every((s) => s.state === 'delivered' && s.attempts === 1)).toBe(true);
    // One line per delivery, naming its event, and each counted with its time since the event.
    const delivered = seen.lines.filter((l) => l.msg === 'webhook.delivered');
    expect(delivered.map((l) => l.fields['event_id']).filter((id) => ids.includes(id as string))).toEqual(
      ids,
    );
    expect(delivered.find((l) => l.fields['kind'] === 'key.created')?.fields).toMatchObject({
      account_id: accountId,
      attempts: 1,
      status: 204,
    });
    expect(seen.settled.filter((x) => x.outcome === 'delivered')).toHaveLength(4);
    expect(seen.settled.every((x) => x.seconds >= 0)).toBe(true);
  });

  it('a receiver that is down and comes back gets every event', async () => {
    const { accountId } = await accountWithEndpoint();
    receiver.mode = 'down';
    const ids = await emit(accountId, 5);
    const d = dispatcher();
    expect(await d.drain()).toBe(5);
    clock.advance(RETRY_SCHEDULE_SECONDS[0] * 1000); // first retry: one minute later
    expect(await d.drain()).toBe(5);
    receiver.mode = 'up';
    expect(await d.drain()).toBe(0); // the next retry is not due yet: no sleeping, no early retries
    clock.advance(RETRY_SCHEDULE_SECONDS[1] * 1000);
    expect(await d.drain()).toBe(5);
    expect(receiver.rejected).toEqual([]);
    expect(ids.every((id) => receiver.received.some((r) => r.id === id))).toBe(true);
  });

  it('one down for the whole schedule ends in the dead-letter list', async () => {
    const { accountId, headers } = await accountWithEndpoint();
    receiver.mode = 'down';
    const [first, second] = await emit(accountId, 2);
    const seen = recorded();
    const d = dispatcher({ log: seen.log, observe: seen.observe });
    let attempts = 0;
    const started = clock.now().getTime();
    for (let i = 0; i < MAX_DELIVERY_ATTEMPTS; i++) {
      attempts += await d.drain();
      const wait = RETRY_SCHEDULE_SECONDS[i];
      if (wait !== undefined) clock.advance(wait * 1000);
    }
    expect(attempts).toBe(2 * MAX_DELIVERY_ATTEMPTS);
    const days = (clock.now().getTime() - started) / 86_400_000;
    expect(days).toBeGreaterThan(2.5);
    expect(days).toBeLessThan(3.5);
    clock.advance(86_400_000);
    expect(await d.drain()).toBe(0);
    // Each dead letter is a warning line with its event and its last answer, and is counted.
    const dead = seen.lines.filter((l) => l.msg === 'webhook.dead_lettered');
    expect(dead.map((l) => l.level)).toEqual(['warn', 'warn']);
    expect(dead.map((l) => l.fields['event_id']).sort()).toEqual([first, second].sort());
    expect(dead[0]?.fields).toMatchObject({ attempts: MAX_DELIVERY_ATTEMPTS, status: 503 });
    expect(seen.settled.map((x) => x.outcome)).toEqual(['dead_lettered', 'dead_lettered']);
    expect(seen.settled[0]!.seconds / 86_400).toBeGreaterThan(2.5);

    const res = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/failures', headers });
    expect(res.statusCode).toBe(200);
    const page = res.json() as {
      failures: { id: number; event_id: string; attempts: number; last_status: number; body: string }[];
      next_cursor: number | null;
    };
    expect(page.failures.map((f) => f.event_id).sort()).toEqual([first, second].sort());
    expect(page.failures[0]!.attempts).toBe(MAX_DELIVERY_ATTEMPTS);
    expect(page.failures[0]!.last_status).toBe(503);
    expect(page.failures[0]!.id).toBeGreaterThan(page.failures[1]!.id);
    expect(page.next_cursor).toBeNull();

    const one = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/failures?limit=1', headers });
    const p1 = one.json() as { failures: { id: number }[]; next_cursor: number };
    expect(p1.failures).toHaveLength(1);
    expect(p1.next_cursor).toBe(p1.failures[0]!.id);
    const two = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/webhooks/failures?limit=1&cursor=${p1.next_cursor}`,
      headers,
    });
    const p2 = two.json() as { failures: { id: number }[]; next_cursor: number | null };
    expect(p2.failures[0]!.id).toBeLessThan(p1.failures[0]!.id);
    expect(p2.next_cursor).toBeNull();
    const bad = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/webhooks/failures?limit=101',
      headers,
    });
    expectErrorBody(bad, 400, 'INVALID_REQUEST');
  });

  it('sends again, in the same attempt, when a kept-alive connection was closed by the receiver', async () => {
    // A receiver that answers the first request of each connection and keeps it open, then drops
    // the connection when a second request arrives on it (as a server whose idle timeout fired
    // just as the connection was reused).
    const seen: string[] = [];
    const sockets = new Set<Socket>();
    const server = createNetServer((socket) => {
      sockets.add(socket);
      let requests = 0;
      let buffered = '';
      socket.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const id = /x-service-event-id: (\S+)/i.exec(buffered)?.[1];
        if (!id || !buffered.includes('}')) return; // wait for the whole request
        buffered = '';
        requests += 1;
        seen.push(id);
        if (requests === 1) socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
        else socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { accountId, headers } = await accountWithEndpoint();
      const port = (server.address() as AddressInfo).port;
      const put = await t.app.fastify.inject({
        method: 'PUT',
        url: '/v1/webhooks/endpoint',
        headers,
        payload: { url: `http://127.0.0.1:${port}/hooks` },
      });
      expect(put.statusCode).toBe(200);
      const d = dispatcher();
      const [first] = await emit(accountId, 1);
      expect(await d.drain()).toBe(1); // a new connection, answered and kept open
      const [second] = await emit(accountId, 1);
      expect(await d.drain()).toBe(1); // the kept one: dropped, then sent again on a new one
      expect(seen.filter((id) => id === first)).toHaveLength(1);
      expect(seen.filter((id) => id === second)).toHaveLength(2);
      const rows = await t.db.db
        .selectFrom('webhook_deliveries')
        .select(['state', 'attempts'])
        .where('account_id', '=', accountId)
        .execute();
      expect(rows).toEqual([
        { state: 'delivered', attempts: 1 },
        { state: 'delivered', attempts: 1 },
      ]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a delivery held by a worker that died is taken over when its lease runs out', async () => {
    const { accountId } = await accountWithEndpoint();
    const [id] = await emit(accountId, 1);
    // The state a killed worker leaves: claimed, attempt counted, never settled.
    await sql`UPDATE webhook_deliveries SET locked_by = 'killed-worker', attempts = 1,
      locked_until = ${new Date(clock.now().getTime() + 30_000)} WHERE event_id = ${id!}`.execute(t.db.db);
    const d = dispatcher();
    expect(await d.drain()).toBe(0);
    clock.advance(30_001);
    expect(await d.drain()).toBe(1);
    expect(receiver.received.some((r) => r.id === id)).toBe(true);
  });

  it('wakes on NOTIFY at commit, without waiting for a poll', async () => {
    const { accountId } = await accountWithEndpoint();
    const d = dispatcher({
      pollIntervalMs: 600_000,
      listen: (channel, onPayload, onState) => t.db.listen(channel, onPayload, onState),
    });
    await d.start();
    try {
      await new Promise((r) => setTimeout(r, 200)); // the first (empty) poll and the LISTEN
      const [id] = await emit(accountId, 1);
      const deadline = Date.now() + 5000;
      while (!receiver.received.some((r) => r.id === id) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(receiver.received.some((r) => r.id === id)).toBe(true);
    } finally {
      await d.stop();
    }
  });
});

describe('GET /v1/events', () => {
  it('lists the account events newest first with an integer cursor', async () => {
    const { accountId, headers } = await accountWithEndpoint();
    const ids = await emit(accountId, 5, 'test.listed');
    const first = await t.app.fastify.inject({ method: 'GET', url: '/v1/events?limit=2', headers });
    expect(first.statusCode).toBe(200);
    const p1 = first.json() as { events: { id: string; kind: string; data: unknown }[]; next_cursor: number };
    expect(p1.events.map((e) => e.id)).toEqual([ids[4], ids[3]]);
    expect(p1.events[0]).toMatchObject({ kind: 'test.listed', subject: 's_4', data: { n: 4 } });
    expect(Number.isInteger(p1.next_cursor)).toBe(true);
    const all: string[] = p1.events.map((e) => e.id);
    let cursor: number | null = p1.next_cursor;
    while (cursor !== null) {
      const res = await t.app.fastify.inject({
        method: 'GET',
        url: `/v1/events?limit=2&cursor=${cursor}`,
        headers,
      });
      const page = res.json() as { events: { id: string }[]; next_cursor: number | null };
      all.push(...page.events.map((e) => e.id));
      cursor = page.next_cursor;
    }
    expect(all.filter((id) => ids.includes(id))).toEqual([...ids].reverse());
    const other = await createAccountWithSession(t.db.db, { now: clock.now() });
    const theirs = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/events',
      headers: bearer(other.sessionToken),
    });
    expect(theirs.json()).toEqual({ events: [], next_cursor: null });
    const bad = await t.app.fastify.inject({ method: 'GET', url: '/v1/events?limit=201', headers });
    expectErrorBody(bad, 400, 'INVALID_REQUEST');
  });
});

describe('GET /v1/webhooks/endpoint', () => {
  it('returns what PUT set, to its own account only; 404 with next when none is registered', async () => {
    const { headers } = await accountWithEndpoint();
    const read = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/endpoint', headers });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({ url: receiver.url });

    const changed = `${receiver.url}/v2`;
    const put = await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/webhooks/endpoint',
      headers,
      payload: { url: changed },
    });
    expect(put.statusCode).toBe(200);
    const again = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/endpoint', headers });
    expect(again.json()).toEqual({ url: changed });

    const other = await createAccountWithSession(t.db.db, { now: clock.now() });
    const theirs = bearer(other.sessionToken);
    const none = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/endpoint', headers: theirs });
    const body = expectErrorBody(none, 404, 'NOT_FOUND');
    expect(body.next).toEqual([
      { method: 'PUT', path: '/v1/webhooks/endpoint', why: 'register the webhook destination' },
    ]);
    // The secret alone (GET /v1/webhooks/secret creates the row) is not a destination.
    await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: theirs });
    const stillNone = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/webhooks/endpoint',
      headers: theirs,
    });
    expectErrorBody(stillNone, 404, 'NOT_FOUND');

    const own = 'http://127.0.0.1:9/their-hooks';
    await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/webhooks/endpoint',
      headers: theirs,
      payload: { url: own },
    });
    const theirsRead = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/webhooks/endpoint',
      headers: theirs,
    });
    expect(theirsRead.json()).toEqual({ url: own });
    const mine = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/endpoint', headers });
    expect(mine.json()).toEqual({ url: changed });
  });

  it('needs admin scope', async () => {
    const { accountId } = await accountWithEndpoint();
    const read = bearer((await createKey(t.db.db, accountId, { scopes: ['read'] })).token);
    const res = await t.app.fastify.inject({ method: 'GET', url: '/v1/webhooks/endpoint', headers: read });
    expectErrorBody(res, 403, 'FORBIDDEN');
    const test = await t.app.fastify.inject({ method: 'POST', url: '/v1/webhooks/test', headers: read });
    expectErrorBody(test, 403, 'FORBIDDEN');
  });
});

describe('POST /v1/webhooks/test', () => {
  it('sends a signed test event the receiver verifies with the secret, and reports it', async () => {
    const { accountId, headers } = await accountWithEndpoint();
    const res = await t.app.fastify.inject({ method: 'POST', url: '/v1/webhooks/test', headers });
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json() as { event_id: string; signed_at: string };
    expect(report).toEqual({
      event_id: expect.stringMatching(/^evt_[0-9a-z]{20}$/) as string,
      kind: 'test',
      url: receiver.url,
      delivered: true,
      status: 204,
      error: null,
      signed_at: new Date(Math.floor(clock.now().getTime() / 1000) * 1000).toISOString(),
    });
    // The receiver verified the signature with the secret of GET /v1/webhooks/secret.
    expect(receiver.rejected).toEqual([]);
    const got = receiver.received.find((r) => r.id === report.event_id);
    expect(got).toEqual({
      id: report.event_id,
      kind: 'test',
      data: { message: expect.any(String) as string, account_id: accountId },
    });
    // Not recorded: no event, no outbox row, nothing for the workers to send again.
    const listed = await t.app.fastify.inject({ method: 'GET', url: '/v1/events', headers });
    expect((listed.json() as { events: { id: string }[] }).events.map((e) => e.id)).not.toContain(
      report.event_id,
    );
    const outbox = await t.db.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', report.event_id)
      .execute();
    expect(outbox).toEqual([]);
  });

  it('reports a destination that does not answer 2xx, and replays under the same Idempotency-Key', async () => {
    const { headers } = await accountWithEndpoint();
    receiver.mode = 'down';
    const res = await t.app.fastify.inject({ method: 'POST', url: '/v1/webhooks/test', headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'test', delivered: false, status: 503, error: 'HTTP 503' });
    receiver.mode = 'up';

    const keyed = { ...headers, 'idempotency-key': `test-event-${clock.now().getTime()}` };
    const first = await t.app.fastify.inject({ method: 'POST', url: '/v1/webhooks/test', headers: keyed });
    const second = await t.app.fastify.inject({ method: 'POST', url: '/v1/webhooks/test', headers: keyed });
    expect(first.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    const id = (first.json() as { event_id: string }).event_id;
    expect(receiver.received.filter((r) => r.id === id)).toHaveLength(1);
  });

  it('answers 404 with next when the account has no destination, whatever another account has', async () => {
    await accountWithEndpoint();
    const before = receiver.received.length;
    const other = await createAccountWithSession(t.db.db, { now: clock.now() });
    const res = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/webhooks/test',
      headers: bearer(other.sessionToken),
    });
    const body = expectErrorBody(res, 404, 'NOT_FOUND');
    expect(body.next).toEqual([
      { method: 'PUT', path: '/v1/webhooks/endpoint', why: 'register the webhook destination' },
    ]);
    expect(receiver.received.length).toBe(before);
  });
});
