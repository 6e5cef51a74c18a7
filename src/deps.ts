// Everything a service needs, passed in: no module-level singletons, so tests can build an app
// from any mix of real and sandbox parts.

import type { FastifyBaseLogger } from 'fastify';
import type { AttestationPort } from './adapters/attestation/port.ts';
import type { BundlerPort } from './adapters/bundler/port.ts';
import type { JurisdictionGate } from './adapters/geo/index.ts';
import type { PmVenuePorts } from './adapters/pm-venue/port.ts';
import type { SafeTxServicePort } from './adapters/safe/tx-service.ts';
import type { ChainPort } from './adapters/chain/port.ts';
import type { VenueAdapter } from './adapters/venues/index.ts';
import type { ObjectStore } from './adapters/object-store/port.ts';
import type { Metrics } from './core/metrics.ts';
import type { Config } from './config.ts';
import type { Clock } from './core/clock.ts';
import type { Db } from './core/db/database.ts';
import type { Authenticator } from './core/http/route-table.ts';
import type { PriceReferences } from './modules/prices/index.ts';
import type { TokenRegistry } from './modules/registry/index.ts';
import type { ScreeningProvider } from './modules/screening/index.ts';

export type { Authenticator } from './core/http/route-table.ts';

export interface AppDeps {
  config: Config;
  /** Prometheus metrics the HTTP layer counts into; absent: nothing is counted (tests). */
  metrics?: Metrics;
  db: Db;
  dbKind: 'postgres' | 'pglite';
  clock: Clock;
  log: FastifyBaseLogger;
  authenticator: Authenticator;
  /**
   * The local cache of verified credentials, if any. Code that revokes or rotates a credential
   * calls `invalidate` after its transaction commits (other processes hear the NOTIFY).
   */
  credentialCache?: { invalidate(id: string): void };
  /** Built once at start from the configuration (in development, the devnet's addresses). */
  tokenRegistry: TokenRegistry;
  /** EVM chains, one JSON-RPC endpoint per chain id (the devnet's anvils in development). */
  chain?: ChainPort;
  /**
   * ERC-4337 bundlers (EntryPoint v0.7), one JSON-RPC endpoint per chain id (`BUNDLER_URL_<id>`;
   * the devnet's own bundler in development). Absent: no UserOperation can be sent.
   */
  bundler?: BundlerPort;
  /**
   * USD price references cached off the request path (docs/prices.md). The runtime starts their
   * refresh timer; absent: no price reference is configured.
   */
  prices?: PriceReferences;
  /**
   * Circle's CCTP attestation service (Iris; the devnet's in development). Absent: rebalances
   * cannot complete (503).
   */
  attestation?: AttestationPort;
  /**
   * The prediction-market venues' APIs (Polymarket's CLOB, Kalshi; the devnet's fakes in
   * development). Absent: credentials cannot be stored (503).
   */
  pmVenues?: PmVenuePorts;
  /**
   * Where a request comes from, for the prediction-market routes (docs/prediction-markets.md).
   * Absent: built from config without a GeoIP database.
   */
  jurisdiction?: JurisdictionGate;
  /** Safe's Transaction Service (the devnet's in development): the funder lookup. Absent: 503. */
  safeIndex?: SafeTxServicePort;
  /** The conversion venues (docs/venues.md); absent: none, so nothing can be quoted. */
  venues?: VenueAdapter[];
  /** Screening providers consulted beside the stored OFAC SDN list (none by default). */
  screeningProviders?: ScreeningProvider[];
  /** Where statement exports are stored (a directory or an S3 bucket); absent: statements answer 503. */
  objectStore?: ObjectStore;
}

// The devnet adds `devnet` to these, from its side (src/devnet/door.ts), in development only.

declare module './core/http/route-table.ts' {
  /** Handlers (`ctx.deps`) and the route table's hooks see every dependency of the application. */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- widens the core's interface
  interface RouteDeps extends AppDeps {}
}

declare module './core/settings.ts' {
  /** What the core declares it reads is the whole configuration here. */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- widens the core's interface
  interface CoreConfig extends Config {}
}
