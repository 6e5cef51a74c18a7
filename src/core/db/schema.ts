// The database's table types. Each module adds its own tables to `Database` by declaration
// merging in its store file, so the module that owns a table also owns its type.

import type { ColumnType, Generated } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  checksum: string;
  applied_at: Generated<Timestamp>;
}

export interface Database {
  schema_migrations: SchemaMigrationsTable;
}

export interface IdempotencyKeysTable {
  scope: string;
  method: string;
  path: string;
  key: string;
  fingerprint: string;
  response_status: number;
  response_body: string;
  response_type: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface Database {
  idempotency_keys: IdempotencyKeysTable;
}
