// Both prediction-market venues' adapters at once, from their URLs (the devnet's fakes in
// development, the venues' own hosts in production).

import type { Clock } from '../../core/clock.ts';
import { createKalshiAdapter } from './kalshi.ts';
import { createPolymarketClob } from './polymarket.ts';
import type { PmVenuePorts } from './port.ts';

/** Polygon: the chain Polymarket's CLOB signatures name. */
export const POLYMARKET_CHAIN_ID = 137;

export function createPmVenuePorts(options: {
  polymarketClobUrl: string;
  kalshiApiUrl: string;
  timeoutMs: number;
  clock: Clock;
}): PmVenuePorts {
  return {
    polymarket: createPolymarketClob({
      baseUrl: options.polymarketClobUrl,
      chainId: POLYMARKET_CHAIN_ID,
      timeoutMs: options.timeoutMs,
      clock: options.clock,
    }),
    kalshi: createKalshiAdapter({
      baseUrl: options.kalshiApiUrl,
      timeoutMs: options.timeoutMs,
      clock: options.clock,
    }),
  };
}

export * from './port.ts';
