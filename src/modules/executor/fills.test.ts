// Fills read from receipts: a real swap and real WETH deposits and withdrawals on the devnet,
// their movements computed from the receipts' logs and checked against the balances read back
// with viem, and the ledger group of a fill booked balanced.

import { encodeFunctionData, parseAbi, parseEther, parseUnits, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { marketTrader, testMarket, type TestMarket } from '../../../test/support/markets.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { createDevnetAmmVenue } from '../../adapters/venues/constant-product.ts';
import { BASE_CHAIN_ID, devnetChain } from '../../devnet/devnet.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { systemClock } from '../../core/clock.ts';
import { erc20Asset, walletAccount } from '../ledger/chart.ts';
import { balanceOf, postGroup } from '../ledger/index.ts';
import { accountMovements, fillEntries, NATIVE } from './fills.ts';

const devnet = inject('devnet');
const base = devnetChain(devnet, BASE_CHAIN_ID);
const wethAbi = parseAbi(['function deposit() payable', 'function withdraw(uint256 wad)']);
let market: TestMarket;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  market = await testMarket(devnet, { TKD: 18, TKE: 6 }, [
    { venue: 'devnet-amm', pair: ['TKD', 'TKE'], fee: null, depth: ['100', '200000'] },
  ]);
});

afterAll(async () => {
  await database?.drop();
});

describe('fills from receipts', () => {
  it('reads a swap: what left and what arrived, exactly as the balances moved', async () => {
    const tkd = market.tokens.TKD!;
    const tke = market.tokens.TKE!;
    const sellAmount = parseUnits('2', 18);
    const trader = await marketTrader(market, tkd, sellAmount);
    const venue = createDevnetAmmVenue({
      chain: createViemChainPort({ rpcUrls: { [BASE_CHAIN_ID]: base.rpcUrl } }),
      timeoutMs: 5_000,
      quoteTtlMs: 15_000,
      deployments: { [BASE_CHAIN_ID]: { router02: base.contracts.uniswapV2Router02! } },
    });
    const quote = await venue.quote({
      chainId: BASE_CHAIN_ID,
      sellToken: tkd.address,
      buyToken: tke.address,
      sellAmount,
      signal: AbortSignal.timeout(10_000),
    });
    const plan = await venue.build({
      quote,
      taker: trader.address,
      slippageBps: 50,
      deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
      signal: AbortSignal.timeout(10_000),
    });
    const receipts = await trader.receipts(plan.calls);
    expect(receipts.map((r) => r.status)).toEqual(['success', 'success']);
    const moves = accountMovements(
      receipts.flatMap((r) => r.logs),
      trader.address,
      base.contracts.weth,
    );
    expect(moves).toEqual(
      new Map([
        [tkd.address.toLowerCase(), -sellAmount],
        [tke.address.toLowerCase(), await trader.balanceOf(tke)],
      ]),
    );
    expect(await trader.balanceOf(tkd)).toBe(0n);
    // Another account's movements in the same logs are not the trader's.
    const pair = receipts[1]!.logs.find((l) => l.address.toLowerCase() === tke.address.toLowerCase())!;
    expect(accountMovements([pair], '0x000000000000000000000000000000000000dEaD', null).size).toBe(0);

    // The fill's group, booked: the wallet's ledger account now holds what the chain says.
    const entries = fillEntries(BASE_CHAIN_ID, trader.address, 'devnet-amm', moves);
    const booked = await postGroup(database.handle.db, systemClock, {
      settlementId: `tx:${receipts[1]!.transactionHash}:fill`,
      accountId: null,
      kind: 'swap',
      entries,
    });
    expect(booked.ok).toBe(true);
    const ledgered = (token: Address) =>
      balanceOf(
        database.handle.db,
        walletAccount(BASE_CHAIN_ID, trader.address),
        erc20Asset(BASE_CHAIN_ID, token),
      );
    expect(await ledgered(tke.address)).toBe(await trader.balanceOf(tke));
    expect(await ledgered(tkd.address)).toBe(-sellAmount);
  });

  it('reads wrapping and unwrapping as native and wrapped native moving opposite ways', async () => {
    const trader = await marketTrader(market, market.tokens.TKD!, 1n);
    const weth: Address = base.contracts.weth;
    const wrapped = await trader.receipts([
      {
        to: weth,
        value: parseEther('0.3'),
        data: encodeFunctionData({ abi: wethAbi, functionName: 'deposit' }),
      },
    ]);
    const unwrapped = await trader.receipts([
      {
        to: weth,
        value: 0n,
        data: encodeFunctionData({ abi: wethAbi, functionName: 'withdraw', args: [parseEther('0.1')] }),
      },
    ]);
    expect(accountMovements(wrapped[0]!.logs, trader.address, weth)).toEqual(
      new Map([
        [NATIVE, -parseEther('0.3')],
        [weth.toLowerCase(), parseEther('0.3')],
      ]),
    );
    const out = accountMovements(unwrapped[0]!.logs, trader.address, weth);
    expect(out).toEqual(
      new Map([
        [NATIVE, parseEther('0.1')],
        [weth.toLowerCase(), -parseEther('0.1')],
      ]),
    );
    // Without naming the wrapped native token, its events are not read as wrapping.
    expect(accountMovements(unwrapped[0]!.logs, trader.address, null).size).toBe(0);
    const held = await createViemChainPort({ rpcUrls: { [BASE_CHAIN_ID]: base.rpcUrl } })
      .publicClient(BASE_CHAIN_ID)
      .readContract({
        address: weth,
        abi: parseAbi(['function balanceOf(address) view returns (uint256)']),
        functionName: 'balanceOf',
        args: [trader.address],
      });
    expect(held).toBe(parseEther('0.2'));
  });
});
