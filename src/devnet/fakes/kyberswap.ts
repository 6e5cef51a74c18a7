// A loopback fake of the KyberSwap Aggregator API v1: `GET /{chain}/api/v1/routes` and
// `POST /{chain}/api/v1/route/build`, with Kyber's query and body names, its `{code, message,
// data, requestId}` envelope and its error codes (docs.kyberswap.com "EVM Swaps"; KyberSwap's
// published error-handling guide for 4000, 4002, 4008). Prices come from the devnet's Uniswap v2
// Router02; `routerAddress` is that router and the built `data` is its
// `swapExactTokensForTokens`, with the minimum at routeSummary.amountOut × (1 − slippage), so it
// really swaps on the devnet. The routeSummary carries a checksum the build step checks, so a
// summary not passed back verbatim is refused. Development and tests only.

import { createHash } from 'node:crypto';
import { getAddress } from 'viem';
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
import { ADDRESS_PATTERN, encodeV2Swap, V2Router, type FakeChain } from './uniswap-v2.ts';

export interface KyberSwapFakeOptions {
  /** Chain id → its RPC URL and Uniswap v2 Router02 (e.g. the devnet's `contracts.uniswapV2Router02` on 8453). */
  chains: Record<number, FakeChain>;
  /** Chain id → path slug (default: 8453 → base, 84532 → base-sepolia, 137 → polygon). */
  slugs?: Record<number, string>;
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export type KyberSwapFake = RunningFake<FakeKnobs>;

const DEFAULT_SLUGS: Record<number, string> = { 8453: 'base', 84532: 'base-sepolia', 137: 'polygon' };
const SWAP_GAS = 200_000n;
const SLIPPAGE_CAP_BPS = 2_000;

interface FieldViolation {
  field: string;
  description: string;
}

export async function startKyberSwapFake(options: KyberSwapFakeOptions): Promise<KyberSwapFake> {
  const bySlug = new Map<string, V2Router>();
  const slugs = options.slugs ?? DEFAULT_SLUGS;
  for (const [chainId, chain] of Object.entries(options.chains)) {
    const slug = slugs[Number(chainId)];
    if (!slug) throw new Error(`KyberSwap fake: no chain slug for chain ${chainId}`);
    bySlug.set(slug, new V2Router(Number(chainId), chain));
  }
  const secret = randomId(16);
  const requestId = () => `${randomId(4)}-${randomId(2)}-${randomId(2)}-${randomId(2)}-${randomId(6)}`;
  const badRequest = (violations: FieldViolation[]): FakeAnswer => ({
    status: 400,
    body: {
      code: 4000,
      message: 'bad request',
      details: [{ fieldViolations: violations }],
      requestId: requestId(),
    },
  });
  const routeNotFound = (): FakeAnswer => ({
    status: 400,
    body: { code: 4008, message: 'route not found', details: null, requestId: requestId() },
  });
  const checksum = (s: Record<string, unknown>): string =>
    BigInt(
      `0x${createHash('sha256')
        .update(
          [
            secret,
            s.tokenIn,
            s.tokenOut,
            s.amountIn,
            s.amountOut,
            s.routeID,
            s.timestamp,
            JSON.stringify(s.route),
          ].join('|'),
        )
        .digest('hex')
        .slice(0, 16)}`,
    ).toString();

  async function routes(router: V2Router, req: FakeRequest, knobs: FakeKnobs): Promise<FakeAnswer> {
    const q = req.query;
    const violations: FieldViolation[] = [];
    for (const field of ['tokenIn', 'tokenOut'] as const) {
      if (q[field] === undefined || q[field] === '') violations.push({ field, description: 'required' });
      else if (!ADDRESS_PATTERN.test(q[field])) violations.push({ field, description: 'invalid' });
    }
    if (q.tokenIn && q.tokenOut && q.tokenIn.toLowerCase() === q.tokenOut.toLowerCase()) {
      violations.push({ field: 'tokenIn', description: 'identical with tokenOut' });
    }
    if (!/^\d+$/.test(q.amountIn ?? '') || BigInt(q.amountIn ?? '0') === 0n) {
      violations.push({ field: 'amountIn', description: 'invalid' });
    }
    if (violations.length > 0) return badRequest(violations);

    const tokenIn = getAddress(q.tokenIn ?? '');
    const tokenOut = getAddress(q.tokenOut ?? '');
    const amountIn = BigInt(q.amountIn ?? '0');
    if (!knobs.liquidity) return routeNotFound();
    const pooled = await router.amountOut(tokenIn, tokenOut, amountIn);
    if (pooled === null) return routeNotFound();
    const amountOut = skewed(pooled, knobs.priceSkewBps);
    const [head, gasPrice] = await Promise.all([router.head(), router.gasPrice()]);

    const summary: Record<string, unknown> = {
      tokenIn: tokenIn.toLowerCase(),
      amountIn: amountIn.toString(),
      amountInUsd: '0',
      tokenOut: tokenOut.toLowerCase(),
      amountOut: amountOut.toString(),
      amountOutUsd: '0',
      gas: SWAP_GAS.toString(),
      gasPrice: gasPrice.toString(),
      gasUsd: '0',
      l1FeeUsd: '0',
      extraFee: { feeAmount: '', chargeFeeBy: '', isInBps: false, feeReceiver: '' },
      route: [
        [
          {
            pool: '',
            tokenIn: tokenIn.toLowerCase(),
            tokenOut: tokenOut.toLowerCase(),
            swapAmount: amountIn.toString(),
            amountOut: amountOut.toString(),
            exchange: 'uniswap',
            poolType: 'uniswap-v2',
            poolExtra: { fee: 3, feePrecision: 1000 },
            extra: {},
          },
        ],
      ],
      routeID: requestId(),
      timestamp: head.timestamp.toString(),
    };
    summary.checksum = checksum(summary);
    return {
      status: 200,
      body: {
        code: 0,
        message: 'successfully',
        data: { routeSummary: summary, routerAddress: router.address },
        requestId: requestId(),
      },
    };
  }

  async function build(router: V2Router, req: FakeRequest, knobs: FakeKnobs): Promise<FakeAnswer> {
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(req.body);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return {
        status: 400,
        body: { code: 4002, message: 'unable to bind request body', details: null, requestId: '' },
      };
    }
    const violations: FieldViolation[] = [];
    const summary = body.routeSummary as Record<string, unknown> | undefined;
    if (typeof summary !== 'object' || summary === null) {
      violations.push({ field: 'routeSummary', description: 'required' });
    } else if (summary.checksum !== checksum(summary)) {
      violations.push({ field: 'routeSummary', description: 'invalid checksum' });
    }
    for (const field of ['sender', 'recipient'] as const) {
      const v = body[field];
      if (v === undefined || v === '') violations.push({ field, description: 'required' });
      else if (typeof v !== 'string' || !ADDRESS_PATTERN.test(v))
        violations.push({ field, description: 'invalid' });
    }
    const slippage = body.slippageTolerance ?? 0;
    const cap = body.ignoreCappedSlippage === true ? 10_000 : SLIPPAGE_CAP_BPS;
    if (typeof slippage !== 'number' || !Number.isInteger(slippage) || slippage < 0 || slippage > cap) {
      violations.push({ field: 'slippageTolerance', description: 'invalid' });
    }
    const head = await router.head();
    const deadline = body.deadline === undefined ? head.timestamp + 1_200n : body.deadline;
    if (typeof deadline !== 'number' && typeof deadline !== 'bigint') {
      violations.push({ field: 'deadline', description: 'invalid' });
    } else if (BigInt(deadline) < head.timestamp) {
      violations.push({ field: 'deadline', description: 'in the past' });
    }
    if (violations.length > 0 || !summary) return badRequest(violations);

    const tokenIn = getAddress(String(summary.tokenIn));
    const tokenOut = getAddress(String(summary.tokenOut));
    const amountIn = BigInt(String(summary.amountIn));
    const quotedOut = BigInt(String(summary.amountOut));
    const pooled = knobs.liquidity ? await router.amountOut(tokenIn, tokenOut, amountIn) : null;
    if (pooled === null) return routeNotFound();
    const amountOut = skewed(pooled, knobs.priceSkewBps);
    const minOut = (quotedOut * BigInt(10_000 - (slippage as number))) / 10_000n;
    const change = amountOut - quotedOut;
    return {
      status: 200,
      body: {
        code: 0,
        message: 'successfully',
        data: {
          amountIn: amountIn.toString(),
          amountInUsd: '0',
          amountOut: amountOut.toString(),
          amountOutUsd: '0',
          gas: SWAP_GAS.toString(),
          gasUsd: '0',
          outputChange: {
            amount: change.toString(),
            percent: quotedOut === 0n ? 0 : Number((change * 1_000_000n) / quotedOut) / 10_000,
            level: 0,
          },
          data: encodeV2Swap({
            amountIn,
            amountOutMin: minOut,
            sellToken: tokenIn,
            buyToken: tokenOut,
            to: getAddress(String(body.recipient)),
            deadline: BigInt(deadline as number),
          }),
          routerAddress: router.address,
          transactionValue: '0',
        },
        requestId: requestId(),
      },
    };
  }

  async function handle(req: FakeRequest, knobs: FakeKnobs): Promise<FakeAnswer> {
    const match = /^\/([a-z0-9-]+)\/api\/v1\/(routes|route\/build)$/.exec(req.path);
    const router = match ? bySlug.get(match[1] ?? '') : undefined;
    const wantedMethod = match?.[2] === 'routes' ? 'GET' : 'POST';
    if (!match || !router || req.method !== wantedMethod) {
      return {
        status: 404,
        body: { code: 404, message: 'not found', details: null, requestId: requestId() },
      };
    }
    if (knobs.rateLimitRetryAfter !== null) {
      return rateLimited(knobs.rateLimitRetryAfter, {
        code: 429,
        message: 'too many requests',
        requestId: requestId(),
      });
    }
    if (knobs.serverError !== null) {
      return {
        status: knobs.serverError,
        body: { code: 500, message: 'internal server error', details: null, requestId: requestId() },
      };
    }
    if (knobs.malformedJson) return { status: 200, body: MALFORMED_BODY };
    return match[2] === 'routes' ? routes(router, req, knobs) : build(router, req, knobs);
  }

  return serveFake({
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    knobs: defaultKnobs,
    handle,
    internalError: () => ({
      code: 500,
      message: 'internal server error',
      details: null,
      requestId: requestId(),
    }),
  });
}
