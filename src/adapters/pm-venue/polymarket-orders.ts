// Polymarket CLOB V2's order: its fields (amounts from order-amounts.ts), its EIP-712 typed data,
// hash and signature, and the `POST /order` body (clob-client-v2 1.1.0's `src/order-utils/*`,
// `src/order-builder/*`; protocols.md §8.5).

import { randomBytes } from 'node:crypto';
import {
  getAddress,
  hashTypedData,
  isAddress,
  type Address,
  type Hex,
  type LocalAccount,
  type TypedDataDefinition,
} from 'viem';
import { systemClock, type Clock } from '../../core/clock.ts';
import { isClobTickSize, orderAmounts, OrderInputError } from './order-amounts.ts';
import {
  type ClobOrderType,
  type ClobOrderV2,
  type ClobPostOrderOptions,
  type ClobSide,
  type ClobSignatureType,
  type ClobSignedOrderV2,
  type ClobTickSize,
} from './port.ts';

// ------------------------------------------------------------------------------ V2 orders

/** The V2 exchanges per chain (clob-client-v2 1.1.0 `src/config.ts`; protocols.md §8.2). */
export const CTF_EXCHANGE_V2: Readonly<
  Record<number, { exchange: Address; negRiskExchange: Address; negRiskAdapter: Address }>
> = {
  137: {
    exchange: '0xE111180000d2663C0091e4f400237545B87B996B',
    negRiskExchange: '0xe2222d279d744050d28e00520010520000310F59',
    negRiskAdapter: '0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296',
  },
  80002: {
    exchange: '0xE111180000d2663C0091e4f400237545B87B996B',
    negRiskExchange: '0xe2222d279d744050d28e00520010520000310F59',
    negRiskAdapter: '0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296',
  },
};

export const CTF_EXCHANGE_V2_DOMAIN = { name: 'Polymarket CTF Exchange', version: '2' } as const;

export const ORDER_V2_TYPES = {
  Order: [
    { name: 'salt', type: 'uint256' },
    { name: 'maker', type: 'address' },
    { name: 'signer', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'makerAmount', type: 'uint256' },
    { name: 'takerAmount', type: 'uint256' },
    { name: 'side', type: 'uint8' },
    { name: 'signatureType', type: 'uint8' },
    { name: 'timestamp', type: 'uint256' },
    { name: 'metadata', type: 'bytes32' },
    { name: 'builder', type: 'bytes32' },
  ],
} as const;

export type OrderV2TypedData = TypedDataDefinition<typeof ORDER_V2_TYPES, 'Order'>;

/**
 * The EIP-712 typed data of a V2 order: domain {Polymarket CTF Exchange, 2, chainId, the exchange
 * (or the neg-risk exchange for a neg-risk market)}. `expiration` is not part of it.
 */
export function orderTypedDataV2(
  order: ClobOrderV2,
  venue: { chainId: number; negRisk: boolean; verifyingContract?: Address },
): OrderV2TypedData {
  let verifyingContract = venue.verifyingContract;
  if (!verifyingContract) {
    const known = CTF_EXCHANGE_V2[venue.chainId];
    if (!known) throw new Error(`orderTypedDataV2: no V2 exchange known for chain ${venue.chainId}`);
    verifyingContract = venue.negRisk ? known.negRiskExchange : known.exchange;
  }
  return {
    domain: { ...CTF_EXCHANGE_V2_DOMAIN, chainId: venue.chainId, verifyingContract },
    types: ORDER_V2_TYPES,
    primaryType: 'Order',
    message: {
      salt: BigInt(order.salt),
      maker: order.maker,
      signer: order.signer,
      tokenId: BigInt(order.tokenId),
      makerAmount: BigInt(order.makerAmount),
      takerAmount: BigInt(order.takerAmount),
      side: order.side === 'BUY' ? 0 : 1,
      signatureType: order.signatureType,
      timestamp: BigInt(order.timestamp),
      metadata: order.metadata,
      builder: order.builder,
    },
  };
}

/** The order's id on the CLOB: the EIP-712 hash of its typed data. */
export function orderHashV2(
  order: ClobOrderV2,
  venue: { chainId: number; negRisk: boolean; verifyingContract?: Address },
): Hex {
  return hashTypedData(orderTypedDataV2(order, venue));
}

/** The bytes32 the client puts in `metadata` and `builder` when there is none. */
export const ZERO_BYTES32: Hex = `0x${'0'.repeat(64)}`;

export const UINT = /^\d+$/;
export const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
export const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * A fresh salt: a random integer below 2^53. The `POST /order` body carries the salt as a JSON
 * number (clob-client-v2 `orderToJsonV2`: `parseInt(salt)`), so it must be a safe integer for the
 * venue to hash the order that was signed; the client's own is `Math.round(Math.random() * Date.now())`.
 */
export function newOrderSalt(): string {
  return (randomBytes(8).readBigUInt64BE() & BigInt(Number.MAX_SAFE_INTEGER)).toString();
}

export interface OrderV2Input {
  /** Whose funds: the signer itself (type 0), its proxy wallet (1) or its Safe (2). */
  maker: Address;
  /** The EOA that signs (the API credential's address). */
  signer: Address;
  signatureType: ClobSignatureType;
  /** The outcome token (ERC-1155 position id), decimal. */
  tokenId: string | bigint;
  side: ClobSide;
  /** Decimal string on the market's tick grid, in (0, 1). */
  price: string;
  /** Shares, decimal string, more than 0, at most 2 decimals. */
  size: string;
  /** The market's tick size (`tickSize(tokenId)`). */
  tickSize: ClobTickSize;
  /** Default: newOrderSalt(). A safe integer. */
  salt?: string | number | bigint;
  /** Milliseconds since the epoch; default the clock's now. */
  timestamp?: string | number | bigint;
  /** Unix seconds for a GTD order; default "0" (none). Not signed. */
  expiration?: string | number | bigint;
  /** bytes32, default zero. */
  metadata?: Hex;
  /** The builder code (bytes32), default zero. */
  builder?: Hex;
  /** Where the default timestamp comes from. */
  clock?: Clock;
}

export function uintField(
  field: 'salt' | 'timestamp' | 'expiration' | 'tokenId',
  value: string | number | bigint,
  max: bigint,
): string {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  else if (typeof value === 'string' && UINT.test(value.trim())) n = BigInt(value.trim());
  else throw new OrderInputError(field, `${field} must be a non-negative integer`);
  if (n < 0n) throw new OrderInputError(field, `${field} must be a non-negative integer`);
  if (n > max) throw new OrderInputError(field, `${field} is out of range`);
  return n.toString();
}

export function addressField(field: 'maker' | 'signer', value: string): Address {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw new OrderInputError(field, `${field} must be an address`);
  }
  return getAddress(value);
}

export function bytes32Field(field: 'metadata' | 'builder', value: string | undefined): Hex {
  if (value === undefined) return ZERO_BYTES32;
  if (typeof value !== 'string' || !BYTES32.test(value)) {
    throw new OrderInputError(field, `${field} must be 32 bytes of hex (0x + 64 digits)`);
  }
  return value.toLowerCase() as Hex;
}

/**
 * A V2 limit order with the amounts the venue's client computes for the price, size and tick size
 * (exactly, see order-amounts.ts), ready to sign. Refuses, with an OrderInputError naming the
 * field, a price outside (0, 1) or off the tick grid, a size of 0 or with more than 2 decimals, and
 * a maker/signer pair the signature type does not allow.
 */
export function buildOrderV2(input: OrderV2Input): ClobOrderV2 {
  const maker = addressField('maker', input.maker);
  const signer = addressField('signer', input.signer);
  const type = input.signatureType;
  if (type !== 0 && type !== 1 && type !== 2 && type !== 3) {
    throw new OrderInputError('signatureType', 'signatureType must be 0, 1, 2 or 3');
  }
  const same = maker === signer;
  if ((type === 0 || type === 3) && !same) {
    throw new OrderInputError('maker', `signature type ${type} needs the maker to be the signer`);
  }
  if ((type === 1 || type === 2) && same) {
    throw new OrderInputError(
      'maker',
      `signature type ${type} needs the maker to be the funder (the proxy or Safe), not the signer`,
    );
  }
  if (!isClobTickSize(input.tickSize)) {
    throw new OrderInputError('tickSize', 'tickSize must be one of 0.1, 0.01, 0.005, 0.0025, 0.001, 0.0001');
  }
  const tokenId = uintField('tokenId', input.tokenId, MAX_UINT256);
  if (tokenId === '0') throw new OrderInputError('tokenId', 'tokenId must be an outcome token id');
  const amounts = orderAmounts({
    side: input.side,
    price: input.price,
    size: input.size,
    tickSize: input.tickSize,
  });
  const now = (input.clock ?? systemClock).now().getTime();
  return {
    salt: uintField('salt', input.salt ?? newOrderSalt(), BigInt(Number.MAX_SAFE_INTEGER)),
    maker,
    signer,
    tokenId,
    makerAmount: amounts.makerAmount.toString(),
    takerAmount: amounts.takerAmount.toString(),
    side: input.side,
    signatureType: type,
    timestamp: uintField('timestamp', input.timestamp ?? now, MAX_UINT256),
    expiration: uintField('expiration', input.expiration ?? 0, MAX_UINT256),
    metadata: bytes32Field('metadata', input.metadata),
    builder: bytes32Field('builder', input.builder),
  };
}

/**
 * The order signed with the signer's key (EIP-712, see orderTypedDataV2). Types 0, 1 and 2 only:
 * a POLY_1271 (type 3) order is signed in its wallet's ERC-1271 envelope, which is not done here.
 */
export async function signOrderV2(
  order: ClobOrderV2,
  account: LocalAccount,
  venue: { chainId: number; negRisk: boolean; verifyingContract?: Address },
): Promise<ClobSignedOrderV2> {
  if (order.signatureType === 3)
    throw new Error('signOrderV2: POLY_1271 (type 3) orders are not signed here');
  if (getAddress(account.address) !== getAddress(order.signer)) {
    throw new Error('signOrderV2: the account is not the order signer');
  }
  const signature = await account.signTypedData(orderTypedDataV2(order, venue));
  return { ...order, signature };
}

/** The body of `POST /order` (clob-client-v2 `orderToJsonV2`): the salt as a JSON number. */
export interface OrderPayloadV2 {
  deferExec: boolean;
  postOnly: boolean;
  order: Omit<ClobSignedOrderV2, 'salt'> & { salt: number };
  /** The API key that posts it. */
  owner: string;
  orderType: ClobOrderType;
}

/** The `POST /order` body for a signed order, keys in the client's order. */
export function orderPayloadV2(
  order: ClobSignedOrderV2,
  owner: string,
  options: ClobPostOrderOptions,
): OrderPayloadV2 {
  const salt = Number(order.salt);
  if (!UINT.test(order.salt) || !Number.isSafeInteger(salt)) {
    throw new OrderInputError('salt', 'salt must be a safe integer: the venue reads it as a JSON number');
  }
  return {
    deferExec: options.deferExec ?? false,
    postOnly: options.postOnly ?? false,
    order: {
      salt,
      maker: order.maker,
      signer: order.signer,
      tokenId: order.tokenId,
      makerAmount: order.makerAmount,
      takerAmount: order.takerAmount,
      side: order.side,
      signatureType: order.signatureType,
      timestamp: order.timestamp,
      expiration: order.expiration,
      metadata: order.metadata,
      builder: order.builder,
      signature: order.signature,
    },
    owner,
    orderType: options.orderType,
  };
}
