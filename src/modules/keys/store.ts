import type { Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  token_hash: string;
  token_prefix: string;
  scopes: string[];
  wallets: string[] | null;
  allowed_ips: string[] | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  rotated_to: string | null;
  rotated_from: string | null;
  created_by: string;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    api_keys: ApiKeysTable;
  }
}

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** The key behind a token hash with its account's address, in one round trip (the guard's lookup). */
export async function findKeyForAuth(db: DbExecutor, tokenHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.id',
      'api_keys.account_id',
      'api_keys.token_hash',
      'api_keys.scopes',
      'api_keys.wallets',
      'api_keys.allowed_ips',
      'api_keys.expires_at',
      'api_keys.revoked_at',
      'accounts.address',
      'accounts.offboarded_at',
    ])
    .where('api_keys.token_hash', '=', tokenHash)
    .executeTakeFirst();
}
