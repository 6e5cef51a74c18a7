// Named prepared statements for the PostgreSQL pool. Kysely hands `pg` each statement as text with
// its parameters, which `pg` sends unnamed: the server parses and plans the same text again on
// every request. Here a connection's `query(text, values)` names the statement after its text, so
// each connection parses it once and afterwards sends only Bind and Execute. The server keeps
// its own plan cache per statement (generic plan after five executions when it is no worse).
//
// Bounded: only statements with parameters (a parameterless text may hold several commands,
// which only the simple protocol runs), at most MAX_TEXT characters, and at most MAX_SHAPES
// distinct texts per process; anything else goes unnamed as before.

import { createHash } from 'node:crypto';
import type pg from 'pg';

const MAX_SHAPES = 2000;
const MAX_TEXT = 16_384;

/** Statement text → its name, shared by every connection of the process. */
const names = new Map<string, string>();
/** Texts the server refused to run prepared (see below): sent unnamed from then on. */
const unpreparable = new Set<string>();

function nameOf(text: string): string | null {
  if (unpreparable.has(text)) return null;
  let name = names.get(text);
  if (name) return name;
  if (names.size >= MAX_SHAPES || text.length > MAX_TEXT) return null;
  name = `purser_${createHash('sha256').update(text).digest('base64url').slice(0, 22)}`;
  names.set(text, name);
  return name;
}

/**
 * PostgreSQL refuses a prepared statement whose result columns changed under it (a table altered
 * after the connection prepared `SELECT *` on it): "cached plan must not change result type".
 */
function isStalePlan(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { code?: string }).code === '0A000' &&
    /cached plan must not change result type/.test(String((err as { message?: string }).message))
  );
}

/** Makes `client` run parameterised statements as named prepared statements (see above). */
export function prepareStatementsOn(client: pg.PoolClient): void {
  // The class's method, looked up at each call (not captured now): whatever wraps the class's
  // method later (a test counting round trips) still sees every statement.
  const proto = Object.getPrototypeOf(client) as { query: (...args: unknown[]) => unknown };
  const query = (...args: unknown[]) => proto.query.apply(client, args);
  const prepared = (...args: unknown[]): unknown => {
    const [text, values] = args;
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || args.length !== 2) {
      return query(...args);
    }
    const name = nameOf(text);
    if (!name) return query(...args);
    return (query({ name, text, values }) as Promise<unknown>).catch(async (err: unknown) => {
      if (!isStalePlan(err)) throw err;
      // The connection would keep refusing it: the text goes unnamed from now on, and runs so
      // once more now. Inside a transaction that retry fails too (the failure aborted it): the
      // caller then sees the first error.
      unpreparable.add(text);
      try {
        return await (query(text, values) as Promise<unknown>);
      } catch {
        throw err;
      }
    });
  };
  client.query = prepared as typeof client.query;
}
