// Probe routes for testing the HTTP core: they are registered through the real route table
// (guard, idempotency, time budget, error renderer) and write to a table of their own, so a
// test can count exactly how many domain writes happened.

import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Db, Tx } from '../../src/core/db/database.ts';
import { AppError } from '../../src/core/errors/app-error.ts';
import { defineRoute, type RouteDefinition, type RouteDocs } from '../../src/core/http/route-table.ts';
import { newId } from '../../src/core/ids.ts';

/** A strict body: two required fields, one optional, unknown fields refused. */
export const StrictBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 40 }),
    amount: Type.String({ pattern: '^[0-9]{1,30}$' }),
    note: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const ProbeWrite = Type.Object({ id: Type.String(), name: Type.String(), amount: Type.String() });

export async function createProbeTable(db: Db): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS probe_writes (
    id text PRIMARY KEY,
    route text NOT NULL,
    payload jsonb NOT NULL
  )`.execute(db);
}

/** Domain writes that committed, optionally those of one route (its url pattern). */
export async function countProbeWrites(db: Db, route?: string): Promise<number> {
  const result =
    route === undefined
      ? await sql<{ n: number }>`SELECT count(*)::int AS n FROM probe_writes`.execute(db)
      : await sql<{ n: number }>`SELECT count(*)::int AS n FROM probe_writes WHERE route = ${route}`.execute(
          db,
        );
  return result.rows[0]?.n ?? 0;
}

export async function countIdempotencyKeys(db: Db): Promise<number> {
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys`.execute(db);
  return result.rows[0]?.n ?? 0;
}

export interface WriteProbeOptions {
  url: string;
  operationId: string;
  /** Status of a success; 201 unless a test wants a non-stored one such as 202. */
  status?: number;
  /** Awaited inside the transaction, after the domain write (to hold it open, or take locks). */
  inside?: (tx: Tx) => Promise<void>;
  rateLimited?: boolean;
}

/**
 * POST with a strict body. Inside `ctx.mutate` it inserts one row, then refuses `amount: "0"`
 * with 422 POLICY_VIOLATION (the insert rolls back) and otherwise answers with a fresh id, so a
 * replay is recognisable: a re-run would carry another id.
 */
export function writeProbe(options: WriteProbeOptions): RouteDefinition {
  return defineRoute({
    method: 'POST',
    url: options.url,
    operationId: options.operationId,
    summary: `Test probe ${options.operationId}`,
    tags: ['probe'],
    class: 'public',
    wallet: false,
    rateLimited: options.rateLimited ?? false,
    docs: PROBE_DOCS,
    schema: { body: StrictBody, response: { [options.status ?? 201]: ProbeWrite } },
    handler: async (ctx) =>
      ctx.mutate(async (tx) => {
        const id = newId('prb');
        await sql`INSERT INTO probe_writes (id, route, payload)
                  VALUES (${id}, ${options.url}, ${JSON.stringify(ctx.body)}::jsonb)`.execute(tx);
        if (options.inside) await options.inside(tx);
        if (ctx.body.amount === '0') {
          throw new AppError('POLICY_VIOLATION', 'amount must be positive (rule: probe.min_amount).');
        }
        return { status: options.status ?? 201, body: { id, name: ctx.body.name, amount: ctx.body.amount } };
      }),
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A promise the test settles by hand: one side awaits `opened`, the other calls `open()`. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Blocks the event loop: a handler that burns its budget without giving timers a chance. */
export function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/** Probes are not part of the published API: they carry the least docs a route may. */
export const PROBE_DOCS: RouteDocs = { errors: [], responses: {}, example: { status: 200, response: {} } };
