// Parameter rules that narrow a grant's calls, per selector (docs/delegations.md): an approval
// may name only the venues' contracts as spender, and a swap whose calldata holds its recipient
// at a fixed place must pay the account itself. Selectors whose arguments cannot be pinned at a
// fixed offset (0x AllowanceHolder's `exec`, KyberSwap's `swap`) get none; pure.

import { getAbiItem, pad, toFunctionSelector, toHex, type Address, type Hex } from 'viem';
import { aerodromeRouterAbi, uniswapV2RouterAbi } from '../../adapters/venues/constant-product.ts';
import { swapRouter02Abi } from '../../adapters/venues/uniswap-v3.ts';
import type { ParamRule } from './kernel.ts';

const selectorOf = (abi: Parameters<typeof getAbiItem>[0]['abi'], name: string): Hex =>
  toFunctionSelector(getAbiItem({ abi, name }) as Parameters<typeof toFunctionSelector>[0]);

/** The selectors that carry rules, by what they are. */
export const NARROWED_SELECTORS = {
  /** ERC-20 `approve(address spender, uint256)`. */
  approve: '0x095ea7b3',
  /** `increaseAllowance(address spender, uint256)` (OpenZeppelin ERC-20s). */
  increaseAllowance: '0x39509351',
  /** Uniswap v2 Router02 `swapExactTokensForTokens(…, address[] path, address to, uint256 deadline)`. */
  uniswapV2Swap: selectorOf(uniswapV2RouterAbi, 'swapExactTokensForTokens'),
  /** Aerodrome Router `swapExactTokensForTokens(…, Route[] routes, address to, uint256 deadline)`. */
  aerodromeSwap: selectorOf(aerodromeRouterAbi, 'swapExactTokensForTokens'),
  /** SwapRouter02 `exactInputSingle((tokenIn, tokenOut, fee, recipient, amountIn, amountOutMinimum, sqrtPriceLimitX96))`. */
  exactInputSingle: selectorOf(swapRouter02Abi, 'exactInputSingle'),
  /** SwapRouter02 `multicall(uint256 deadline, bytes[] data)`, as the uniswap-v3 venue sends it. */
  multicallDeadline: selectorOf(swapRouter02Abi, 'multicall'),
} as const;

/** A 32-byte word holding an address or a number. */
const addressWord = (a: Address): Hex => pad(a.toLowerCase() as Hex, { size: 32 });
const uintWord = (n: number | bigint): Hex => toHex(n, { size: 32 });

/** The recipient word of the swaps above: the fourth head word (offset 3 × 32). */
const RECIPIENT_OFFSET = 96;

/**
 * `multicall(deadline, [exactInputSingle(params)])` with exactly one inner call, ABI-encoded the
 * canonical way: data's offset 0x40, one element at 0x20, 228 bytes long (selector + seven
 * words), starting with exactInputSingle's selector; its recipient is then the word at
 * 160 + 4 + 96 = 260. Pinning the layout makes the recipient's place fixed.
 */
function multicallRules(account: Address): ParamRule[] {
  const innerSelector = NARROWED_SELECTORS.exactInputSingle;
  const inner = 160;
  return [
    { condition: 'equal', offset: 32, params: [uintWord(0x40)] },
    { condition: 'equal', offset: 64, params: [uintWord(1)] },
    { condition: 'equal', offset: 96, params: [uintWord(0x20)] },
    { condition: 'equal', offset: 128, params: [uintWord(4 + 7 * 32)] },
    {
      condition: 'greater_than_or_equal',
      offset: inner,
      params: [pad(innerSelector, { size: 32, dir: 'right' })],
    },
    {
      condition: 'less_than_or_equal',
      offset: inner,
      params: [`${innerSelector}${'ff'.repeat(28)}` as Hex],
    },
    { condition: 'equal', offset: inner + 4 + RECIPIENT_OFFSET, params: [addressWord(account)] },
  ];
}

export interface RuleContext {
  /** The smart account the grant is for: the only recipient a swap may name. */
  account: Address;
  /** The venue contracts an approval may name as spender (none: no approval can pass). */
  spenders: readonly Address[];
}

/** The rules of one call by its selector; [] when the selector carries none. */
export function rulesFor(selector: Hex, ctx: RuleContext): ParamRule[] {
  switch (selector.toLowerCase()) {
    case NARROWED_SELECTORS.approve:
    case NARROWED_SELECTORS.increaseAllowance: {
      const spenders = [...new Set(ctx.spenders.map((s) => s.toLowerCase() as Address))].sort();
      return [{ condition: 'one_of', offset: 0, params: spenders.map(addressWord) }];
    }
    case NARROWED_SELECTORS.uniswapV2Swap:
    case NARROWED_SELECTORS.aerodromeSwap:
    case NARROWED_SELECTORS.exactInputSingle:
      return [{ condition: 'equal', offset: RECIPIENT_OFFSET, params: [addressWord(ctx.account)] }];
    case NARROWED_SELECTORS.multicallDeadline:
      return multicallRules(ctx.account);
    default:
      return [];
  }
}

/** Whether the selector gives an allowance (its rule needs at least one spender to allow anything). */
export const isApproval = (selector: string): boolean =>
  selector.toLowerCase() === NARROWED_SELECTORS.approve ||
  selector.toLowerCase() === NARROWED_SELECTORS.increaseAllowance;
