import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';

// Named prepared statements exist on PostgreSQL's pool only (PGlite runs in process).
describe.skipIf(!process.env.DATABASE_URL)('prepared statements on the PostgreSQL pool', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await database?.drop();
  });

  const preparedHere = async () =>
    (
      await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(
        database.handle.db,
      )
    ).rows.map((r) => r.statement);

  it('prepares a parameterised statement once per connection and answers it every time', async () => {
    const { db } = database.handle;
    const shape = (n: number) =>
      sql<{ doubled: number }>`SELECT ${n}::int * 2 AS doubled /* prepared-shape */`.execute(db);
    expect((await shape(2)).rows).toEqual([{ doubled: 4 }]);
    expect((await shape(21)).rows).toEqual([{ doubled: 42 }]);
    const same = (await preparedHere()).filter((s) => s.includes('prepared-shape'));
    expect(same).toHaveLength(1);
  });

  it('still runs a text of several commands without parameters (the simple protocol)', async () => {
    const { db } = database.handle;
    await sql.raw('CREATE TABLE prep_multi (a int); INSERT INTO prep_multi VALUES (7)').execute(db);
    const { rows } = await sql<{ a: number }>`SELECT a FROM prep_multi WHERE a = ${7}`.execute(db);
    expect(rows).toEqual([{ a: 7 }]);
  });

  it('keeps answering a statement whose table changed shape after it was prepared', async () => {
    const { db } = database.handle;
    await sql.raw('CREATE TABLE prep_shape (a int)').execute(db);
    await sql.raw('INSERT INTO prep_shape VALUES (1)').execute(db);
    const read = () => sql<Record<string, unknown>>`SELECT * FROM prep_shape WHERE a = ${1}`.execute(db);
    expect((await read()).rows).toEqual([{ a: 1 }]);
    // A migration of a newer release adds a column while this process runs.
    await sql.raw('ALTER TABLE prep_shape ADD COLUMN b text').execute(db);
    expect((await read()).rows).toEqual([{ a: 1, b: null }]);
    expect((await read()).rows).toEqual([{ a: 1, b: null }]);
  });
});
