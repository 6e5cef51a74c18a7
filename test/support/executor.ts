// What the executor tests share: a USDC/EURC market of the test's own (two fresh tokens the
// registry's USDC and EURC are moved onto, priced as the devnet's feeds say: 1 EURC = 1.08 USDC),
// an app over it, agents whose Kernel accounts hold its USDC under a delegation to approve and swap
// on devnet-amm, conversion requests, and the executor's dependencies as a worker builds them.

import { randomBytes } from 'node:crypto';
import { encodeFunctionData, erc20Abi, getAddress, parseEther, toHex, type Address } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { Config } from '../../src/config.ts';
import { devnetChain, devnetToken, type DevnetInfo } from '../../src/devnet/devnet.ts';
import type { DevnetPoolVenue } from '../../src/devnet/markets.ts';
import { NARROWED_SELECTORS } from '../../src/modules/delegations/rules.ts';
import { runIntentStep, type RunDeps } from '../../src/modules/executor/index.ts';
import { delegatedAgent } from './agent.ts';
import type { TestApp } from './app.ts';
import { devnetKernelApp } from './devnet-deps.ts';
import { marketTrader, testMarket, type TestMarket, type TestToken } from './markets.ts';

export interface EurcMarket {
  market: TestMarket;
  /** The test's tokens standing in for the registry's USDC and EURC. */
  usdc: TestToken;
  eurc: TestToken;
  t: TestApp;
}

/**
 * Fresh USDC and EURC stand-ins with pools on `venues` (`usdcDepth` USDC deep, EURC at `eurcPrice`
 * USDC; default the feeds' 1.08), and an app over them (price references unless `prices: false`).
 * With `realUsdc`, USDC is the devnet's own (EIP-3009: it pays prepaid top-ups) and only EURC is a
 * stand-in, so the pools are still the test's own.
 */
export async function eurcMarket(
  devnet: DevnetInfo,
  pools: { venue: DevnetPoolVenue; usdcDepth: number; eurcPrice?: number }[],
  options: { prices?: boolean; config?: Partial<Config>; realUsdc?: boolean } = {},
): Promise<EurcMarket> {
  const usdcSymbol = options.realUsdc ? 'USDC' : 'TKU';
  const market = await testMarket(
    devnet,
    options.realUsdc ? { TKE: 6 } : { TKU: 6, TKE: 6 },
    pools.map((p) => ({
      venue: p.venue,
      pair: ['TKE', usdcSymbol] as [string, string],
      fee: p.venue === 'uniswap-v3' ? 3000 : null,
      depth: [(p.usdcDepth / (p.eurcPrice ?? 1.08)).toFixed(6), String(p.usdcDepth)] as [string, string],
    })),
  );
  const eurc = market.tokens.TKE!;
  const usdc: TestToken = options.realUsdc
    ? { symbol: 'USDC', address: devnetToken(devnet, 8453, 'USDC').address, decimals: 6 }
    : market.tokens.TKU!;
  const t = await devnetKernelApp(devnet, {
    prices: options.prices ?? true,
    relocate: options.realUsdc ? { EURC: eurc.address } : { USDC: usdc.address, EURC: eurc.address },
    ...(options.config ? { config: options.config } : {}),
  });
  return { market, usdc, eurc, t };
}

/** Mints `amount` of the test token and hands it to `to`. */
export async function giveToken(market: TestMarket, token: TestToken, to: Address, amount: bigint) {
  const trader = await marketTrader(market, token, amount);
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  const sent = await trader.send([{ to: token.address, data, value: 0n }]);
  if (sent[0] !== 'success') throw new Error(`the transfer of ${token.symbol} to ${to} reverted`);
}

/**
 * Tops up the agent's prepaid balance as an agent does: its owner key receives `amount` of the
 * market's USDC (it must be the devnet's own), signs an EIP-3009 authorization against the
 * published terms, and posts it. Returns the balance the 201 answer reports.
 */
export async function topUpPrepaid(
  m: EurcMarket,
  agent: { owner: PrivateKeyAccount; sessionToken: string },
  amount: bigint,
): Promise<string> {
  await giveToken(m.market, m.usdc, agent.owner.address, amount);
  const headers = { authorization: `Bearer ${agent.sessionToken}` };
  const terms = (
    await m.t.app.fastify.inject({ method: 'GET', url: '/v1/balance/topups/terms', headers })
  ).json<{
    pay_to: Address;
    eip712_domain: Record<string, unknown>;
    eip712_types: Record<string, { name: string; type: string }[]>;
    primary_type: string;
  }>();
  const message = {
    from: agent.owner.address,
    to: terms.pay_to,
    value: amount,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: toHex(randomBytes(32)),
  };
  const signature = await agent.owner.signTypedData({
    domain: terms.eip712_domain,
    types: terms.eip712_types,
    primaryType: terms.primary_type,
    message,
  } as Parameters<PrivateKeyAccount['signTypedData']>[0]);
  const res = await m.t.app.fastify.inject({
    method: 'POST',
    url: '/v1/balance/topups',
    headers,
    payload: {
      authorization: {
        ...message,
        value: message.value.toString(),
        validAfter: '0',
        validBefore: message.validBefore.toString(),
      },
      signature,
    },
  });
  if (res.statusCode !== 201) throw new Error(`the top-up answered ${res.statusCode}: ${res.body}`);
  return res.json<{ balance_usd: string }>().balance_usd;
}

/**
 * What `account` holds on chain 8453: the market's two tokens, and its native coin with its
 * EntryPoint deposit (where its operations' gas is paid from; the ledger counts both as one).
 */
export async function chainHoldings(m: EurcMarket, account: Address) {
  const client = m.t.deps.chain!.publicClient(8453);
  const deposit = await client.readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'balanceOf',
    args: [account],
  });
  return {
    usdc: await chainHeld(m.t, m.usdc, account),
    eurc: await chainHeld(m.t, m.eurc, account),
    native: (await client.getBalance({ address: account })) + deposit,
  };
}

/** The token balance of `account` on chain 8453. */
export function chainHeld(t: TestApp, token: TestToken | Address, account: Address): Promise<bigint> {
  return t.deps.chain!.publicClient(8453).readContract({
    address: typeof token === 'string' ? token : token.address,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [account],
  });
}

/**
 * An agent whose Kernel account holds `usdcAmount` of the market's USDC and 0.05 ETH, with a
 * policy allowing a 1% budget (and `policy`), delegated approve and swap on devnet-amm (or `calls`).
 */
export async function conversionAgent(
  devnet: DevnetInfo,
  m: EurcMarket,
  usdcAmount: bigint,
  options: {
    policy?: Record<string, unknown>;
    calls?: { target: string; selector: string; value_limit: string }[];
    rateLimit?: number;
    signIn?: boolean;
    /** Wei the account holds (default 0.05 ETH), and whether the faucet deploys it first. */
    ethWei?: bigint;
    deploy?: boolean;
  } = {},
) {
  const a = await delegatedAgent(m.t, {
    ...(options.signIn ? { signIn: true } : {}),
    ...(options.deploy ? { deploy: true } : {}),
    ethWei: options.ethWei ?? parseEther('0.05'),
    policy: { execution: { max_slippage_bps: 100 }, ...options.policy },
    calls: options.calls ?? [
      { target: m.usdc.address, selector: NARROWED_SELECTORS.approve, value_limit: '0' },
      {
        target: devnetChain(devnet, 8453).contracts.uniswapV2Router02!,
        selector: NARROWED_SELECTORS.uniswapV2Swap,
        value_limit: '0',
      },
    ],
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
  });
  if (usdcAmount > 0n) await giveToken(m.market, m.usdc, getAddress(a.account), usdcAmount);
  return a;
}

/** A conversion of `amount` USDC base units into EURC on devnet-amm with a 1% budget. */
export const sellUsdc = (
  m: EurcMarket,
  wallet: string,
  amount: bigint,
  more: Record<string, unknown> = {},
) => ({
  wallet,
  kind: 'conversion',
  sell_token: m.usdc.address,
  buy_token: m.eurc.address,
  sell_amount: amount.toString(),
  venues: ['devnet-amm'],
  max_slippage_bps: 100,
  ...more,
});

/** The executor's dependencies as the `intents.execute` job builds them from the app's. */
export function runDeps(t: TestApp, overrides: Partial<RunDeps> = {}): RunDeps {
  return {
    config: t.deps.config,
    clock: t.deps.clock,
    db: t.db.db,
    registry: t.deps.tokenRegistry!,
    chain: t.deps.chain!,
    bundler: t.deps.bundler,
    venues: t.deps.venues ?? [],
    prices: t.deps.prices,
    log: t.deps.log,
    ...overrides,
  };
}

/**
 * Runs the intent's steps as its job would until it ends, pausing `pauseMs` between them: the
 * status it ends in and, when it aborted, why (the abort's reason and detail), for a failure to name.
 */
export async function runToEnd(
  t: TestApp,
  id: string,
  { steps = 40, pauseMs = 50 }: { steps?: number; pauseMs?: number } = {},
): Promise<{ status: string; abort?: unknown }> {
  for (let i = 0; i < steps; i += 1) {
    const step = await runIntentStep(runDeps(t), id);
    if (step.state === 'done') {
      const row = await t.db.db
        .selectFrom('intents')
        .select('params')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const abort = (row.params as { abort?: unknown }).abort;
      return abort === undefined ? { status: step.status } : { status: step.status, abort };
    }
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  throw new Error(`intent ${id} did not end in ${steps} steps`);
}
