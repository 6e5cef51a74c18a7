// The CLOB fake's state: its options resolved (the chain, the V2 exchanges, the clock) and what it
// holds in memory (markets, API keys, funders, balances, orders, trades), with the records each is
// kept as. The other files of the fake take it as their first argument.

import { createPublicClient, getAddress, http, type Address, type Hex, type PublicClient } from 'viem';
import { systemClock, type Clock } from '../../../core/clock.ts';
import { chainDefinition } from '../../../adapters/chain/viem.ts';
import { CTF_EXCHANGE_V2 } from '../../../adapters/pm-venue/polymarket.ts';
import type { ClobSide } from '../../../adapters/pm-venue/port.ts';
import type { ClobFakeChain, ClobFakeMarket, ClobFakeOptions } from './types.ts';

export interface ApiKeyRecord {
  apiKey: string;
  secret: string;
  passphrase: string;
  address: Address;
  nonce: string;
  createdAt: number;
}

export type OrderType = 'GTC' | 'GTD' | 'FOK' | 'FAK';
export type OrderStatus = 'LIVE' | 'MATCHED' | 'CANCELED' | 'EXPIRED';

export interface BookOrder {
  id: Hex;
  seq: number;
  owner: string;
  ownerAddress: Address;
  maker: Address;
  market: ClobFakeMarket;
  tokenId: string;
  outcome: string;
  side: ClobSide;
  /** Price in millionths. */
  price: bigint;
  /** Outcome tokens, base units. */
  size: bigint;
  matched: bigint;
  status: OrderStatus;
  orderType: OrderType;
  expiration: number;
  createdAt: number;
  trades: string[];
}

export interface MakerFill {
  order: BookOrder;
  amount: bigint;
  price: bigint;
}

export interface TradeRecord {
  id: string;
  takerOrderId: Hex;
  market: ClobFakeMarket;
  tokenId: string;
  outcome: string;
  side: ClobSide;
  size: bigint;
  price: bigint;
  status: string;
  matchTime: number;
  lastUpdate: number;
  takerOwner: string;
  takerOwnerAddress: Address | null;
  takerMaker: Address;
  makers: MakerFill[];
  transactionHash: string;
  errMsg: string | null;
}

export interface BalanceEntry {
  balance: bigint;
  allowances: Map<string, bigint>;
}

/** A request that passed L2 authentication. */
export interface Caller {
  key: ApiKeyRecord;
}

export interface ClobState {
  chainId: number;
  /** The V2 exchanges orders are signed for. */
  exchange: Address;
  negRiskExchange: Address;
  /** The spenders balance answers list allowances for (the exchanges and the NegRiskAdapter). */
  spenders: Address[];
  clock: Clock;
  /** How far POLY_TIMESTAMP may be from the clock, both ways, in seconds. */
  skew: number;
  nowSeconds: () => number;
  /** Where balances, allowances and Safe owners are read, when the options name a chain. */
  chain: ClobFakeChain | undefined;
  chainClient: PublicClient | null;
  /** The JSON file the API keys are kept in across restarts, if any. */
  persistPath: string | undefined;
  /** Markets by token and by condition (lowercase). */
  marketsByToken: Map<string, ClobFakeMarket>;
  marketsByCondition: Map<string, ClobFakeMarket>;
  /** API keys by id, and their ids by `address:nonce` (lowercase address). */
  keys: Map<string, ApiKeyRecord>;
  keyByOwnerNonce: Map<string, string>;
  /** Funders (types 1 and 2) by signer, balances by `owner:asset`, orders by id, trades. */
  funders: Map<string, { funder: Address; type: 1 | 2 | null }[]>;
  balances: Map<string, BalanceEntry>;
  orders: Map<string, BookOrder>;
  tradeList: TradeRecord[];
  tradesById: Map<string, TradeRecord>;
  /** The last order's sequence number (time priority), and the house's made-up order count. */
  seq: number;
  houseSeq: number;
}

/** The state of a fresh fake (no markets or keys yet); throws for a chain with no V2 exchange known. */
export function createClobState(options: ClobFakeOptions): ClobState {
  const chainId = options.chainId ?? 137;
  const known = CTF_EXCHANGE_V2[chainId];
  const exchange = options.exchange ?? known?.exchange;
  const negRiskExchange = options.negRiskExchange ?? known?.negRiskExchange;
  const negRiskAdapter = options.negRiskAdapter ?? known?.negRiskAdapter;
  if (!exchange || !negRiskExchange || !negRiskAdapter) {
    throw new Error(
      `startClobFake: no V2 exchange known for chain ${chainId}; pass exchange and negRiskExchange`,
    );
  }
  const clock = options.clock ?? systemClock;

  let chainClient: PublicClient | null = null;
  if (options.chain) {
    chainClient = createPublicClient({
      chain: chainDefinition(chainId, options.chain.rpcUrl),
      transport: http(options.chain.rpcUrl, { retryCount: 1 }),
    });
  }

  return {
    chainId,
    exchange,
    negRiskExchange,
    spenders: [getAddress(exchange), getAddress(negRiskExchange), getAddress(negRiskAdapter)],
    clock,
    skew: options.maxClockSkewSeconds ?? 60,
    nowSeconds: () => Math.floor(clock.now().getTime() / 1000),
    chain: options.chain,
    chainClient,
    persistPath: options.persistPath,
    marketsByToken: new Map(),
    marketsByCondition: new Map(),
    keys: new Map(),
    keyByOwnerNonce: new Map(),
    funders: new Map(),
    balances: new Map(),
    orders: new Map(),
    tradeList: [],
    tradesById: new Map(),
    seq: 0,
    houseSeq: 0,
  };
}
