// An order as the CLOB fake takes it: the body of `POST /order` (and each item of `POST /orders`)
// parsed into a V2 order, its owner and signer checked against the API key, and its EIP-712
// signature verified as the exchange would (type 0 EOA; 1 proxy and 2 Safe for a registered
// funder, or a Safe whose owner the signer is on chain).

import { getAddress, isAddress, parseAbi, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { orderTypedDataV2 } from '../../../adapters/pm-venue/polymarket.ts';
import type { ClobOrderV2, ClobSignatureType } from '../../../adapters/pm-venue/port.ts';
import { CLOB_ERRORS, Refusal } from './answers.ts';
import type { Caller, ClobState, OrderType } from './state.ts';
import type { ClobFakeMarket } from './types.ts';
import { BYTES32, DECIMAL, lower, MAX_UINT256, ZERO_BYTES32 } from './units.ts';

const safeAbi = parseAbi(['function isOwner(address owner) view returns (bool)']);

export interface ParsedOrder {
  order: ClobOrderV2;
  signature: Hex;
  owner: string;
  orderType: OrderType;
  postOnly: boolean;
}

/** The body of one order (`{order, owner, orderType, postOnly, deferExec}`), or null. */
export function parseOrder(item: unknown): ParsedOrder | null {
  if (typeof item !== 'object' || item === null) return null;
  const { order, owner, orderType, postOnly } = item as Record<string, unknown>;
  if (typeof order !== 'object' || order === null || typeof owner !== 'string') return null;
  const o = order as Record<string, unknown>;
  const type = orderType === undefined ? 'GTC' : orderType;
  if (type !== 'GTC' && type !== 'GTD' && type !== 'FOK' && type !== 'FAK') return null;
  if (postOnly !== undefined && typeof postOnly !== 'boolean') return null;
  const salt = typeof o.salt === 'number' && Number.isSafeInteger(o.salt) ? String(o.salt) : o.salt;
  const numeric = [salt, o.tokenId, o.makerAmount, o.takerAmount, o.timestamp, o.expiration ?? '0'];
  if (!numeric.every((v) => typeof v === 'string' && DECIMAL.test(v) && BigInt(v) <= MAX_UINT256))
    return null;
  if (
    typeof o.maker !== 'string' ||
    !isAddress(o.maker) ||
    typeof o.signer !== 'string' ||
    !isAddress(o.signer)
  )
    return null;
  if (o.side !== 'BUY' && o.side !== 'SELL') return null;
  if (o.signatureType !== 0 && o.signatureType !== 1 && o.signatureType !== 2 && o.signatureType !== 3)
    return null;
  const bytes32 = (v: unknown): Hex | null =>
    v === undefined || v === '' ? ZERO_BYTES32 : typeof v === 'string' && BYTES32.test(v) ? (v as Hex) : null;
  const metadata = bytes32(o.metadata);
  const builder = bytes32(o.builder);
  if (!metadata || !builder) return null;
  if (typeof o.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(o.signature)) return null;
  if (BigInt(o.makerAmount as string) === 0n || BigInt(o.takerAmount as string) === 0n) return null;
  return {
    order: {
      salt: salt as string,
      maker: getAddress(o.maker),
      signer: getAddress(o.signer),
      tokenId: BigInt(o.tokenId as string).toString(),
      makerAmount: BigInt(o.makerAmount as string).toString(),
      takerAmount: BigInt(o.takerAmount as string).toString(),
      side: o.side,
      signatureType: o.signatureType as ClobSignatureType,
      timestamp: o.timestamp as string,
      expiration: BigInt((o.expiration as string | undefined) ?? '0').toString(),
      metadata,
      builder,
    },
    signature: o.signature as Hex,
    owner,
    orderType: type,
    postOnly: postOnly === true,
  };
}

/** The checks `POST /order` refuses the whole request for. */
export function checkOwnership(parsed: ParsedOrder, caller: Caller): void {
  if (parsed.owner !== caller.key.apiKey) throw new Refusal(400, CLOB_ERRORS.ownerMismatch);
  if (lower(parsed.order.signer) !== lower(caller.key.address))
    throw new Refusal(400, CLOB_ERRORS.signerMismatch);
}

/** Whether the order's signature is its signer's, and the signer may sign for its maker. */
export async function signatureAccepted(
  state: ClobState,
  order: ClobOrderV2,
  signature: Hex,
  market: ClobFakeMarket,
): Promise<boolean> {
  let signedBy: Address;
  try {
    signedBy = await recoverTypedDataAddress({
      ...orderTypedDataV2(order, {
        chainId: state.chainId,
        negRisk: market.negRisk ?? false,
        verifyingContract: market.negRisk ? state.negRiskExchange : state.exchange,
      }),
      signature,
    });
  } catch {
    return false;
  }
  if (lower(signedBy) !== lower(order.signer)) return false;
  if (order.signatureType === 0) return lower(order.maker) === lower(order.signer);
  if (order.signatureType === 3) return false; // POLY_1271 smart-contract wallets: not served
  if (lower(order.maker) === lower(order.signer)) return false;
  const registered = (state.funders.get(lower(order.signer)) ?? []).some(
    (f) => lower(f.funder) === lower(order.maker) && (f.type === null || f.type === order.signatureType),
  );
  if (registered) return true;
  if (order.signatureType === 2 && state.chainClient) {
    try {
      return await state.chainClient.readContract({
        address: order.maker,
        abi: safeAbi,
        functionName: 'isOwner',
        args: [order.signer],
      });
    } catch {
      return false;
    }
  }
  return false;
}
