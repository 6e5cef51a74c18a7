// The CLOB fake's public shapes: the markets it serves, its start options, the knobs a test turns
// and the handle startClobFake returns (src/devnet/fakes/clob.ts). Development and tests only.

import type { Address, Hex } from 'viem';
import type { Clock } from '../../../core/clock.ts';
import type { ClobOpenOrder, ClobTickSize, ClobTrade } from '../../../adapters/pm-venue/port.ts';
import type { FakeKnobs, RunningFake } from '../loopback.ts';

export type { ClobTickSize } from '../../../adapters/pm-venue/port.ts';

export interface ClobFakeToken {
  /** The ERC-1155 position id, as a decimal string. */
  tokenId: string;
  /** "Yes", "No", or a candidate's name. */
  outcome: string;
}

export interface ClobFakeMarket {
  /** The market's condition id (bytes32). */
  conditionId: Hex;
  tokens: [ClobFakeToken, ClobFakeToken];
  tickSize: ClobTickSize;
  /** Orders of a neg-risk market are signed for the neg-risk exchange. Default false. */
  negRisk?: boolean;
  /** Smallest order in shares (default 5, Polymarket's usual). */
  minOrderSize?: number;
  question?: string;
}

/** Where balances and allowances are read on chain, and where Safes are asked for their owners. */
export interface ClobFakeChain {
  rpcUrl: string;
  /** The collateral ERC-20 (pUSD). Without it, collateral comes from the in-memory table. */
  collateral?: Address;
  /** The conditional tokens (ERC-1155). Without it, outcome tokens come from the in-memory table. */
  conditionalTokens?: Address;
}

export interface ClobFakeOptions {
  /** The chain the signatures name (default 137, Polygon: what the client signs for). */
  chainId?: number;
  markets?: ClobFakeMarket[];
  /** The V2 exchanges orders are signed for (default: the client's addresses for the chain). */
  exchange?: Address;
  negRiskExchange?: Address;
  /** The third spender in balance answers (default: Polymarket's NegRiskAdapter). */
  negRiskAdapter?: Address;
  /** When given: balances and allowances read on chain, Safe owners (type 2) asked on chain. */
  chain?: ClobFakeChain;
  /** How far POLY_TIMESTAMP may be from the fake's clock, both ways (default 60 s). */
  maxClockSkewSeconds?: number;
  /** Keeps the API keys (secrets included) in this JSON file across restarts (mode 0600). */
  persistPath?: string;
  clock?: Clock;
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface ClobFakeKnobs extends FakeKnobs {
  /** Items per page of `/data/orders` and `/data/trades` (the cursor walk the client does). */
  pageSize: number;
  /**
   * What a new trade reads: `confirmed` (status CONFIRMED, a made-up transaction hash), `matched`
   * (MATCHED, no hash yet: the real client then waits up to 30 s for one) or `failed` (FAILED).
   */
  settlement: 'confirmed' | 'matched' | 'failed';
  /** Refuse orders the funder's balance and allowance (less its open orders) cannot cover. */
  enforceBalances: boolean;
  /** `disabled`: every trading call 503; `cancel-only`: new orders 503, cancels pass. */
  trading: 'open' | 'disabled' | 'cancel-only';
  /**
   * `GET /data/order/{id}` answers `null` for an order that matched in full, as the live venue was
   * reported to do for an order that matched at once: only its trades still show it.
   */
  forgetMatchedOrders: boolean;
}

// The CLOB's wire shapes of orders and trades are the adapter's (src/adapters/pm-venue/port.ts):
// what the fake answers is what the adapter reads.
export type { ClobMakerOrder, ClobOpenOrder, ClobTrade } from '../../../adapters/pm-venue/port.ts';

export interface ClobFake extends RunningFake<ClobFakeKnobs> {
  chainId: number;
  /** The exchange and neg-risk exchange orders must be signed for. */
  exchange: Address;
  negRiskExchange: Address;
  /** The spenders balance answers list allowances for. */
  spenders: Address[];
  addMarket(market: ClobFakeMarket): void;
  /** Changes a market's tick size (as Polymarket does near 0 and 1), by token or condition id. */
  setTickSize(tokenOrConditionId: string, tickSize: ClobTickSize): void;
  /** `funder` (a proxy wallet or Safe) may be the maker of orders `signer` signs (types 1 and 2). */
  registerFunder(funder: Address, signer: Address, signatureType?: 1 | 2): void;
  /**
   * Sets `owner`'s balance of collateral or of an outcome token in the in-memory table (used for
   * what the chain options do not cover), in base units; allowances default to the maximum for
   * every spender.
   */
  setBalance(
    owner: Address,
    asset: 'COLLATERAL' | { tokenId: string },
    balance: bigint,
    allowances?: Partial<Record<Address, bigint>>,
  ): void;
  /**
   * Fills a resting order against the house: `size` in shares (default: all that remains).
   * Returns the trade as the order's owner sees it.
   */
  fill(orderId: Hex, size?: string | number): ClobTrade;
  /** Moves a trade on (e.g. MATCHED → MINED → CONFIRMED with a hash, or FAILED). */
  settleTrade(tradeId: string, update: { status: string; transactionHash?: Hex; errMsg?: string }): void;
  /** An order as its owner reads it, or undefined. */
  order(orderId: Hex): ClobOpenOrder | undefined;
  /** Every trade, as its taker sees it, oldest first. */
  trades(): ClobTrade[];
  /** The API key ids of an address (no secrets). */
  apiKeys(address: Address): string[];
}
