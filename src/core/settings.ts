// The settings the core reads (HTTP, database, error rendering), declared here so the core never
// imports the configuration above it. The application's whole configuration (src/config.ts) has
// these members and is merged into `CoreConfig` (src/deps.ts), so handlers see all of it.

export type PurserEnv = 'development' | 'production';

export interface CoreConfig {
  env: PurserEnv;
  /** Requests per minute per client on the public routes. */
  publicRateLimitPerMinute: number;
  /** A request's time budget, in milliseconds. */
  requestBudgetMs: number;
  /** The operator surface's token; null: /v1/ops/ does not exist. */
  operatorToken: string | null;
}

/** Where the database is: PostgreSQL at `databaseUrl`, else the embedded PGlite in `dataDir`. */
export interface DatabaseSettings {
  env: PurserEnv;
  databaseUrl: string | null;
  databasePoolSize: number;
  dataDir: string;
}
