import { testConfig } from '../../config.ts';
import { spawn } from 'node:child_process';
import { keyringOf } from '../../core/sealing.ts';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { createAccount } from '../../../test/support/identity.ts';
import { ManualClock } from '../../core/clock.ts';
import { createLogger } from '../../core/log.ts';
import { emitEvent } from '../events/index.ts';
import { createWebhookDispatcher } from './dispatcher.ts';
import { ensureSecret, setEndpoint } from './service.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) {
  console.log('Skipping the webhook kill test: it needs two processes on PostgreSQL. Set DATABASE_URL.');
}

const clock = new ManualClock(new Date());
let t: TestApp;
let url = '';
let secret = '';
let hang = true;
const held: ServerResponse[] = [];
const delivered: string[] = [];
let firstArrival: (() => void) | null = null;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (hang) {
      held.push(res); // never answered: the delivering process dies first
      firstArrival?.();
      return;
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    const eventId = String(req.headers['x-service-event-id']);
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['x-service-signature']));
    const fresh =
      m?.[1] !== undefined && Math.abs(Math.floor(clock.now().getTime() / 1000) - Number(m[1])) <= 300;
    const mac = createHmac('sha256', secret).update(`${m?.[1]}.${eventId}.${raw}`).digest();
    if (!m?.[2] || !fresh || !timingSafeEqual(mac, Buffer.from(m[2], 'hex'))) {
      res.writeHead(400).end();
      return;
    }
    delivered.push(eventId);
    res.writeHead(204).end();
  });
});

beforeAll(async () => {
  if (!onPostgres) return;
  t = await createTestApp({ clock });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  for (const res of held) res.destroy();
  server.close();
  await t?.close();
});

describe.skipIf(!onPostgres)('a webhook dispatcher killed mid-delivery', () => {
  it('loses nothing: another dispatcher delivers once the lease runs out', async () => {
    const { accountId } = await createAccount(t.db.db);
    const settings = { production: false, keyring: keyringOf(testConfig().sealingKeys) };
    await t.db.db.transaction().execute((tx) => setEndpoint(tx, clock, settings, accountId, url));
    secret = await ensureSecret(t.db.db, clock, settings, accountId);

    const script = fileURLToPath(
      new URL('../../../test/support/webhook-dispatcher-child.ts', import.meta.url),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script, t.database.url ?? '', 'doomed'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const arrived = new Promise<void>((resolve) => (firstArrival = resolve));
    let eventId = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the child never started')), 20_000);
        child.stdout.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`the child exited early (${code})`)));
      });
      eventId = await t.db.db
        .transaction()
        .execute((tx) => emitEvent(tx, clock, { accountId, kind: 'test.killed', payload: { n: 1 } }));
      await arrived; // the child is in the middle of the POST
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const leased = await t.db.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(leased).toMatchObject({ state: 'pending', locked_by: 'doomed', attempts: 1 });

    hang = false;
    const survivor = createWebhookDispatcher({
      db: t.db.db,
      clock,
      log: createLogger('silent'),
      keyring: keyringOf(testConfig().sealingKeys),
      production: false,
      workerId: 'survivor',
    });
    clock.set(new Date());
    expect(await survivor.drain()).toBe(0); // still leased by the dead process
    clock.advance(21_000);
    expect(await survivor.drain()).toBe(1);
    expect(delivered).toEqual([eventId]);
    const done = await t.db.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(done).toMatchObject({ state: 'delivered', attempts: 2, locked_by: null });
  }, 30_000);
});
