// A loopback fake of 0x Swap API v2, AllowanceHolder flow: `GET /swap/allowance-holder/price`
// and `GET /swap/allowance-holder/quote` with 0x's query names, headers (`0x-api-key`,
// `0x-version: v2`), answer shape and error envelopes (docs.0x.org API reference). Prices come from
// the devnet's Uniswap v2 Router02 and the quote's transaction is Router02's
// `swapExactTokensForTokens`, so it really swaps on the devnet; the router is both
// `transaction.to` and the allowance target. Development and tests only.
//
// Where 0x's exact text is not documented (the 401 for a wrong key, the answer to a missing
// `0x-version`), the fake uses the envelope 0x uses elsewhere; docs/decisions.md lists these.

import { getAddress, type Address } from 'viem';
import {
  defaultKnobs,
  MALFORMED_BODY,
  randomId,
  rateLimited,
  serveFake,
  skewed,
  type FakeAnswer,
  type FakeKnobs,
  type FakeRequest,
  type RunningFake,
} from './loopback.ts';
import { encodeV2Swap, V2Router, type FakeChain } from './uniswap-v2.ts';

export interface ZeroExFakeKnobs extends FakeKnobs {
  /** 0x's own fee, in bps of the buy amount, reported in `fees.zeroExFee` (default 0). */
  zeroExFeeBps: number;
}

export interface ZeroExFakeOptions {
  /** Chain id → its RPC URL and Uniswap v2 Router02 (e.g. the devnet's `contracts.uniswapV2Router02` on 8453). */
  chains: Record<number, FakeChain>;
  /** The only `0x-api-key` accepted. */
  apiKey: string;
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export type ZeroExFake = RunningFake<ZeroExFakeKnobs>;

/** 0x's gateway answer to a request without a key (as 0x sends it). */
export const ZEROX_NO_KEY_MESSAGE =
  'No API key provided. Please visit https://0x.org/pricing to get a free API key or sign up to a paid plan';
export const ZEROX_INVALID_KEY_MESSAGE = 'Invalid API key';

const PRICE_PATH = '/swap/allowance-holder/price';
const QUOTE_PATH = '/swap/allowance-holder/quote';
/** 0x's token pattern: an address that is not zero. */
const TOKEN_PATTERN = /^0x(?!0{40})[a-fA-F0-9]{40}$/;
const TAKER_PATTERN = /^0x[a-fA-F0-9]{40}$/;
/** What the fake reports as the swap's gas (Router02 direct-pair swaps use ~110k). */
const SWAP_GAS = 200_000n;
/** How long the quote's swap stays valid past the chain's latest block. */
const SWAP_DEADLINE_SECONDS = 1_200n;

export async function startZeroExFake(options: ZeroExFakeOptions): Promise<ZeroExFake> {
  const routers = new Map<number, V2Router>();
  for (const [chainId, chain] of Object.entries(options.chains)) {
    routers.set(Number(chainId), new V2Router(Number(chainId), chain));
  }
  const zid = () => `0x${randomId(12)}`;

  const inputInvalid = (details: { field: string; reason: string }[]): FakeAnswer => ({
    status: 400,
    body: { name: 'INPUT_INVALID', message: 'The input is invalid', data: { zid: zid(), details } },
  });

  async function handle(req: FakeRequest, knobs: ZeroExFakeKnobs): Promise<FakeAnswer> {
    if (req.method !== 'GET' || (req.path !== PRICE_PATH && req.path !== QUOTE_PATH)) {
      return {
        status: 404,
        body: { message: 'no Route matched with those values', request_id: randomId(16) },
      };
    }
    const key = req.headers['0x-api-key'];
    if (key === undefined || key === '') {
      return { status: 401, body: { message: ZEROX_NO_KEY_MESSAGE, request_id: randomId(16) } };
    }
    if (key !== options.apiKey) {
      return { status: 401, body: { message: ZEROX_INVALID_KEY_MESSAGE, request_id: randomId(16) } };
    }
    if (req.headers['0x-version'] !== 'v2') {
      return inputInvalid([
        { field: '0x-version', reason: 'The 0x-version header is required and must be v2' },
      ]);
    }
    if (knobs.rateLimitRetryAfter !== null) {
      return rateLimited(knobs.rateLimitRetryAfter, {
        message: 'API rate limit exceeded',
        request_id: randomId(16),
      });
    }
    if (knobs.serverError !== null) {
      return {
        status: knobs.serverError,
        body: {
          name: 'INTERNAL_SERVER_ERROR',
          message: 'An internal server error occurred',
          data: { zid: zid() },
        },
      };
    }
    if (knobs.malformedJson) return { status: 200, body: MALFORMED_BODY };

    const firm = req.path === QUOTE_PATH;
    const q = req.query;
    const problems: { field: string; reason: string }[] = [];
    const chainId = /^\d+$/.test(q.chainId ?? '') ? Number(q.chainId) : NaN;
    const router = routers.get(chainId);
    if (!router) problems.push({ field: 'chainId', reason: 'Chain is not supported' });
    for (const field of ['sellToken', 'buyToken'] as const) {
      if (!TOKEN_PATTERN.test(q[field] ?? '')) problems.push({ field, reason: 'Invalid ethereum address' });
    }
    if (q.sellToken && q.buyToken && q.sellToken.toLowerCase() === q.buyToken.toLowerCase()) {
      problems.push({ field: 'buyToken', reason: 'buyToken and sellToken must be different' });
    }
    if (!/^\d+$/.test(q.sellAmount ?? '') || BigInt(q.sellAmount ?? '0') === 0n) {
      problems.push({ field: 'sellAmount', reason: 'sellAmount must be a positive integer' });
    }
    if (firm && q.taker === undefined) problems.push({ field: 'taker', reason: 'taker is required' });
    for (const field of ['taker', 'recipient'] as const) {
      if (q[field] !== undefined && !TAKER_PATTERN.test(q[field])) {
        problems.push({ field, reason: 'Invalid ethereum address' });
      }
    }
    const slippageBps = q.slippageBps === undefined ? 100 : Number(q.slippageBps);
    if (!Number.isInteger(slippageBps) || slippageBps < 0 || slippageBps > 10_000) {
      problems.push({ field: 'slippageBps', reason: 'slippageBps must be an integer between 0 and 10000' });
    }
    if (problems.length > 0 || !router) return inputInvalid(problems);

    const sellToken = getAddress(q.sellToken ?? '');
    const buyToken = getAddress(q.buyToken ?? '');
    const sellAmount = BigInt(q.sellAmount ?? '0');
    const taker = q.taker ? getAddress(q.taker) : undefined;
    if (!knobs.liquidity) return { status: 200, body: { liquidityAvailable: false, zid: zid() } };
    const pooled = await router.amountOut(sellToken, buyToken, sellAmount);
    if (pooled === null) return { status: 200, body: { liquidityAvailable: false, zid: zid() } };

    const gross = skewed(pooled, knobs.priceSkewBps);
    const fee = (gross * BigInt(Math.max(0, Math.trunc(knobs.zeroExFeeBps)))) / 10_000n;
    const buyAmount = gross - fee;
    const minBuyAmount = (buyAmount * BigInt(10_000 - slippageBps)) / 10_000n;
    const [head, gasPrice, sellSymbol, buySymbol] = await Promise.all([
      router.head(),
      router.gasPrice(),
      router.symbol(sellToken),
      router.symbol(buyToken),
    ]);
    let allowanceIssue: { actual: string; spender: Address } | null = null;
    let balanceIssue: { token: Address; actual: string; expected: string } | null = null;
    if (taker) {
      const [allowance, balance] = await Promise.all([
        router.allowance(sellToken, taker),
        router.balanceOf(sellToken, taker),
      ]);
      if (allowance < sellAmount) allowanceIssue = { actual: allowance.toString(), spender: router.address };
      if (balance < sellAmount) {
        balanceIssue = { token: sellToken, actual: balance.toString(), expected: sellAmount.toString() };
      }
    }

    const body: Record<string, unknown> = {
      allowanceTarget: router.address,
      blockNumber: head.number.toString(),
      buyAmount: buyAmount.toString(),
      buyToken,
      fees: {
        integratorFee: null,
        zeroExFee: fee > 0n ? { amount: fee.toString(), token: buyToken, type: 'volume' } : null,
        gasFee: null,
      },
      gas: SWAP_GAS.toString(),
      gasPrice: gasPrice.toString(),
      issues: {
        allowance: allowanceIssue,
        balance: balanceIssue,
        simulationIncomplete: false,
        invalidSourcesPassed: [],
      },
      liquidityAvailable: true,
      minBuyAmount: minBuyAmount.toString(),
      route: {
        fills: [{ from: sellToken, to: buyToken, source: 'Uniswap_V2', proportionBps: '10000' }],
        tokens: [
          { address: sellToken, symbol: sellSymbol },
          { address: buyToken, symbol: buySymbol },
        ],
      },
      sellAmount: sellAmount.toString(),
      sellToken,
      tokenMetadata: {
        buyToken: { buyTaxBps: '0', sellTaxBps: '0' },
        sellToken: { buyTaxBps: '0', sellTaxBps: '0' },
      },
      totalNetworkFee: (SWAP_GAS * gasPrice).toString(),
      zid: zid(),
    };
    if (firm && taker) {
      body.transaction = {
        to: router.address,
        data: encodeV2Swap({
          amountIn: sellAmount,
          amountOutMin: minBuyAmount,
          sellToken,
          buyToken,
          to: q.recipient ? getAddress(q.recipient) : taker,
          deadline: head.timestamp + SWAP_DEADLINE_SECONDS,
        }),
        gas: SWAP_GAS.toString(),
        gasPrice: gasPrice.toString(),
        value: '0',
      };
    }
    return { status: 200, body };
  }

  return serveFake<ZeroExFakeKnobs>({
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    knobs: () => ({ ...defaultKnobs(), zeroExFeeBps: 0 }),
    handle,
    internalError: () => ({
      name: 'INTERNAL_SERVER_ERROR',
      message: 'An internal server error occurred',
      data: { zid: zid() },
    }),
  });
}
