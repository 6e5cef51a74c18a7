// The shapes the prediction-market order files share: what they need (OrderDeps), the body of
// POST /v1/pm/orders and /prepare and what they answer, and a request's Idempotency-Key.

import type { ClobOrderV2, PolymarketClobPort } from '../../adapters/pm-venue/port.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../core/db/database.ts';
import type { TokenRegistry } from '../registry/index.ts';
import type { CredentialDeps } from './credentials.ts';

export interface OrderDeps extends CredentialDeps {
  config: Config;
  db: Db;
  registry: TokenRegistry;
  clob: PolymarketClobPort;
}

export interface PlaceOrderBody {
  venue?: 'polymarket' | undefined;
  wallet: string;
  credential_id: string;
  condition_id: string;
  token_id: string;
  action: 'buy' | 'sell';
  price_usd: string;
  size_shares: string;
  client_order_id?: string | undefined;
  state?: object | undefined;
}

export interface PlacedOrder {
  venue: 'polymarket';
  order_id: string;
  status: string;
  cost_usd: string;
  fee_usd: string;
  policy_version: number;
}

export interface PreparedOrder {
  venue: 'polymarket';
  prepare_id: string;
  client_order_id: string | null;
  /** The EIP-712 payload to sign with typed-data signing (eth_signTypedData_v4), numbers as strings. */
  typed_data: Record<string, unknown>;
  order: ClobOrderV2;
  cost_usd: string;
  fee_usd: string;
  policy_version: number;
  expires_at: string;
}

/** A request's Idempotency-Key, with the fingerprint of the request (method, path, query, body). */
export interface OrderKey {
  key: string;
  fingerprint: string;
}

/** An order route's answer: the first outcome, or a replay of it under the same key. */
export interface KeyedAnswer<T> {
  body: T;
  replayed: boolean;
}
