// Strict readers for fields of an aggregator's JSON answer. Each one throws VenueError
// `bad_response` naming the field when the value is not what the vendor documents, so an adapter
// reads an answer top to bottom and nothing malformed reaches a quote or a plan.

import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { minimumAfterSlippage, VenueError, type ConversionVenue } from './port.ts';

const UINT256_MAX = 2n ** 256n - 1n;

export class AnswerReader {
  constructor(
    readonly venue: ConversionVenue,
    /** What the answer was, for messages: "0x price", "kyberswap route build"… */
    readonly what: string,
  ) {}

  fail(message: string): never {
    throw new VenueError(this.venue, 'bad_response', `${this.what}: ${message}`);
  }

  object(value: unknown, field: string): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      this.fail(`${field} is not an object`);
    return value as Record<string, unknown>;
  }

  /** A base-unit amount: a decimal integer string within uint256. */
  uint(value: unknown, field: string): bigint {
    if (typeof value !== 'string' || !/^\d{1,78}$/.test(value))
      this.fail(`${field} is not an integer string`);
    const n = BigInt(value);
    if (n > UINT256_MAX) this.fail(`${field} is out of range`);
    return n;
  }

  address(value: unknown, field: string): Address {
    if (typeof value !== 'string' || !isAddress(value, { strict: false }))
      this.fail(`${field} is not an address`);
    const address = getAddress(value);
    if (address === '0x0000000000000000000000000000000000000000') this.fail(`${field} is the zero address`);
    return address;
  }

  /** Non-empty calldata. */
  calldata(value: unknown, field: string): Hex {
    if (typeof value !== 'string' || !/^0x([0-9a-fA-F]{2}){4,}$/.test(value))
      this.fail(`${field} is not calldata`);
    return value as Hex;
  }

  sameAddress(actual: Address, expected: Address, field: string): void {
    if (actual.toLowerCase() !== expected.toLowerCase())
      this.fail(`${field} ${actual} is not the requested ${expected}`);
  }

  sameAmount(actual: bigint, expected: bigint, field: string): void {
    if (actual !== expected) this.fail(`${field} ${actual} is not the requested ${expected}`);
  }
}

/**
 * Refuses, before any request, what no venue can price: a chain the adapter is not configured
 * for, a token sold for itself, or nothing to sell. Kind `no_quote`: the venue cannot answer it.
 */
export function refuseUnservable(
  venue: ConversionVenue,
  chains: readonly number[],
  request: { chainId: number; sellToken: Address; buyToken: Address; sellAmount: bigint },
): void {
  if (!chains.includes(request.chainId)) {
    throw new VenueError(venue, 'no_quote', `${venue} is not configured for chain ${request.chainId}`);
  }
  if (request.sellToken.toLowerCase() === request.buyToken.toLowerCase()) {
    throw new VenueError(venue, 'no_quote', `${venue} cannot convert a token into itself`);
  }
  if (request.sellAmount <= 0n) {
    throw new VenueError(venue, 'no_quote', `${venue} cannot price a sell amount of ${request.sellAmount}`);
  }
}

/** The slippage floor of a build, refusing a budget that is not whole basis points in 0..10000. */
export function slippageFloor(venue: ConversionVenue, amount: bigint, slippageBps: number): bigint {
  try {
    return minimumAfterSlippage(amount, slippageBps);
  } catch (err) {
    throw new VenueError(venue, 'no_quote', `${venue}: ${(err as Error).message}`);
  }
}

/**
 * A vendor's own error text, short, with every occurrence of `secrets` blanked out: an echo of
 * a credential must not travel on in a message.
 */
export function vendorText(value: unknown, secrets: readonly string[] = []): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  let text = value.trim();
  for (const secret of secrets) if (secret.length > 0) text = text.split(secret).join('[redacted]');
  return text.slice(0, 200);
}
