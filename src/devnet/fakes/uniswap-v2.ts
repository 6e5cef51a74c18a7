// The devnet's Uniswap v2 Router02, as the aggregator fakes use it: `getAmountsOut` prices a
// direct pair, and `swapExactTokensForTokens` is the calldata they hand out, so what a fake
// quotes really swaps on the devnet. Development and tests only.

import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  http,
  parseAbi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { chainDefinition } from '../../adapters/chain/viem.ts';

/** The two Router02 functions the fakes use (same signatures as @uniswap/v2-periphery's artifact). */
export const uniswapV2Router02Abi = parseAbi([
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
]);

/** Where a fake finds one chain's router. */
export interface FakeChain {
  rpcUrl: string;
  /** The devnet's Uniswap v2 Router02: priced through, and the swap's target and spender. */
  router: Address;
}

export class V2Router {
  readonly client: PublicClient;

  constructor(
    readonly chainId: number,
    readonly chain: FakeChain,
  ) {
    this.client = createPublicClient({
      chain: chainDefinition(chainId, chain.rpcUrl),
      transport: http(chain.rpcUrl, { retryCount: 1 }),
    });
  }

  get address(): Address {
    return this.chain.router;
  }

  /** What the direct pair gives for amountIn, or null when there is no pool or no liquidity. */
  async amountOut(sellToken: Address, buyToken: Address, amountIn: bigint): Promise<bigint | null> {
    try {
      const amounts = await this.client.readContract({
        address: this.chain.router,
        abi: uniswapV2Router02Abi,
        functionName: 'getAmountsOut',
        args: [amountIn, [sellToken, buyToken]],
      });
      const out = amounts[amounts.length - 1] ?? 0n;
      return out > 0n ? out : null;
    } catch (err) {
      if (isRevert(err)) return null;
      throw err;
    }
  }

  /** Latest block: number and timestamp (the chain's clock, which tests may move). */
  async head(): Promise<{ number: bigint; timestamp: bigint }> {
    const block = await this.client.getBlock();
    return { number: block.number, timestamp: block.timestamp };
  }

  async gasPrice(): Promise<bigint> {
    return this.client.getGasPrice();
  }

  async symbol(token: Address): Promise<string> {
    try {
      return await this.client.readContract({ address: token, abi: erc20Abi, functionName: 'symbol' });
    } catch {
      return '';
    }
  }

  async balanceOf(token: Address, owner: Address): Promise<bigint> {
    return this.client.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    });
  }

  async allowance(token: Address, owner: Address): Promise<bigint> {
    return this.client.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [owner, this.chain.router],
    });
  }
}

/** Router02 `swapExactTokensForTokens` calldata for a direct pair. */
export function encodeV2Swap(args: {
  amountIn: bigint;
  amountOutMin: bigint;
  sellToken: Address;
  buyToken: Address;
  to: Address;
  deadline: bigint;
}): Hex {
  return encodeFunctionData({
    abi: uniswapV2Router02Abi,
    functionName: 'swapExactTokensForTokens',
    args: [args.amountIn, args.amountOutMin, [args.sellToken, args.buyToken], args.to, args.deadline],
  });
}

function isRevert(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  const found = err.walk(
    (e) =>
      e instanceof ContractFunctionRevertedError ||
      e instanceof ContractFunctionZeroDataError ||
      (e instanceof Error && /revert/i.test(e.message)),
  );
  return found !== null;
}

/** 0x and Kyber both accept any hex case; the fakes compare lowercased. */
export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;
