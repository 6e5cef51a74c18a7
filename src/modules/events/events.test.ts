import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { ManualClock } from '../../core/clock.ts';
import { listAudit, recordAudit } from '../audit/index.ts';
import { emitEvent, listEvents } from './index.ts';

let tdb: TestDatabase;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('events and audit facts (transactional outbox)', () => {
  it('commit with the state they report, and vanish with it on rollback', async () => {
    const db = tdb.handle.db;
    const committed = await db.transaction().execute(async (tx) => {
      const eventId = await emitEvent(tx, clock, {
        accountId: 'acc_a',
        kind: 'key.created',
        subject: 'key_1',
        payload: { id: 'key_1' },
      });
      await recordAudit(tx, clock, {
        accountId: 'acc_a',
        actor: 'session:ses_1',
        action: 'key.create',
        subject: 'key_1',
        network: { clientIp: '203.0.113.9', userAgent: 'x'.repeat(500) },
      });
      return eventId;
    });
    await expect(
      db.transaction().execute(async (tx) => {
        await emitEvent(tx, clock, { accountId: 'acc_a', kind: 'key.revoked', payload: {} });
        await recordAudit(tx, clock, { accountId: 'acc_a', actor: 'system', action: 'key.revoke' });
        throw new Error('the domain write failed');
      }),
    ).rejects.toThrow('the domain write failed');

    const events = await listEvents(db, 'acc_a', 10);
    expect(events.map((e) => e.kind)).toEqual(['key.created']);
    expect(events[0]?.id).toBe(committed);
    expect(events[0]?.id).toMatch(/^evt_[0-9a-z]{20}$/);
    expect(events[0]?.payload).toEqual({ id: 'key_1' });
    expect(new Date(events[0]!.created_at).toISOString()).toBe('2026-03-01T12:00:00.000Z');

    const audit = await listAudit(db, 'acc_a', 10);
    expect(audit.map((a) => a.action)).toEqual(['key.create']);
    expect(audit[0]?.client_ip).toBe('203.0.113.9');
    expect(audit[0]?.user_agent).toHaveLength(200);
    expect(await listEvents(db, 'acc_b', 10)).toEqual([]);
  });

  it('are append-only: the database refuses UPDATE and DELETE', async () => {
    const db = tdb.handle.db;
    await db
      .transaction()
      .execute((tx) => emitEvent(tx, clock, { accountId: 'acc_c', kind: 'x.happened', payload: { n: 1 } }));
    await db
      .transaction()
      .execute((tx) => recordAudit(tx, clock, { accountId: 'acc_c', actor: 'system', action: 'x' }));
    await expect(
      sql`UPDATE events SET kind = 'rewritten' WHERE account_id = 'acc_c'`.execute(db),
    ).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM events WHERE account_id = 'acc_c'`.execute(db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`DELETE FROM audit_log WHERE account_id = 'acc_c'`.execute(db)).rejects.toThrow(
      /append-only/,
    );
    expect((await listEvents(db, 'acc_c', 10))[0]?.kind).toBe('x.happened');

    // The housekeeping sweep's path: only a transaction that opts in may delete, and even it may
    // not edit.
    await expect(
      db.transaction().execute(async (tx) => {
        await sql`SET LOCAL purser.retention = 'on'`.execute(tx);
        await sql`UPDATE events SET kind = 'rewritten' WHERE account_id = 'acc_c'`.execute(tx);
      }),
    ).rejects.toThrow(/append-only: UPDATE refused/);
    expect((await listEvents(db, 'acc_c', 10))[0]?.kind).toBe('x.happened');
    await db.transaction().execute(async (tx) => {
      await sql`SET LOCAL purser.retention = 'on'`.execute(tx);
      await sql`DELETE FROM events WHERE account_id = 'acc_c'`.execute(tx);
    });
    expect(await listEvents(db, 'acc_c', 10)).toEqual([]);
    await expect(sql`DELETE FROM audit_log WHERE account_id = 'acc_c'`.execute(db)).rejects.toThrow(
      /append-only/,
    );
  });
});
