// One statement on the PostgreSQL server itself (CREATE or DROP DATABASE), on a connection of its
// own. Free of vitest, so the run's global setup can use it too.

import pg from 'pg';

export async function onServer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
