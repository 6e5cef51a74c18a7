// Books that match the chain, end to end on the devnet: an agent's Kernel account is watched from
// its policy on; the faucet's deposit is booked, a conversion's fills are not counted twice, the
// owner's own UserOperation sending USDC out is booked as a withdrawal, and afterwards the
// statement's closing of every token equals what the chain holds, read with viem. The account
// export lists the watched wallet and its chain's cursor.

import { erc20Abi, encodeFunctionData, getAddress, type Address } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { watchConfig } from '../../../test/support/chain-watch.ts';
import {
  conversionAgent,
  eurcMarket,
  runToEnd,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import {
  devnetKernelSmartAccount,
  draftUserOperation,
  signedUserOperation,
} from '../../../test/support/kernel.ts';
import { createJsonRpcBundler } from '../../adapters/bundler/json-rpc.ts';
import { testConfig } from '../../config.ts';
import { devnetBundlerUrls, devnetChain } from '../../devnet/devnet.ts';
import { fundAddress } from '../../devnet/faucet.ts';
import type { Intent } from '../intents/index.ts';
import { watchChains, type WatchDeps } from './index.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const USD = 1_000_000n;
let m: EurcMarket;

beforeAll(async () => {
  const config = testConfig();
  m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }], {
    realUsdc: true,
    config: {
      planner: { ...config.planner, sliceIntervalMs: 100 },
      executor: { ...config.executor, receiptPollMs: 50 },
      chainWatch: watchConfig(),
    },
  });
});
afterAll(async () => {
  await m?.t.close();
});

function watch() {
  const t = m.t;
  const deps: WatchDeps = {
    db: t.db.db,
    clock: t.deps.clock,
    chain: t.deps.chain!,
    registry: t.deps.tokenRegistry!,
    config: t.deps.config,
  };
  return watchChains(deps);
}

const onChain = (token: Address, holder: Address) =>
  m.t.deps.chain!.publicClient(CHAIN).readContract({
    address: token,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [holder],
  });

interface StatementRow {
  ledger_account: string;
  asset: string;
  symbol: string | null;
  closing: string;
}

describe('books that match the chain', () => {
  it('books the faucet deposit and the owner’s withdrawal, matches the fills; the statement closes at the chain', async () => {
    const t = m.t;
    const a = await conversionAgent(devnet, m, 0n);
    const account = getAddress(a.account);
    // The first run opens the wallet (its policy made it watched) at what it holds: no USDC yet.
    await watch();

    // The faucet mints 1,000 USDC to the account: an external deposit.
    await fundAddress(devnet, {
      chainId: CHAIN,
      address: account,
      tokens: [{ symbol: 'USDC', amount: 1_000n * USD }],
    });
    const afterDeposit = await watch();
    expect(afterDeposit.find((r) => r.chainId === CHAIN)!.booked).toBe(1);

    // The agent converts 20 USDC; the fill is Purser's own booking, so the watcher matches it.
    const intent = await a.api<Intent>('POST', '/v1/intents', sellUsdc(m, a.wallet, 20n * USD));
    expect(await runToEnd(t, intent.id, { pauseMs: 0 })).toEqual({ status: 'filled' });
    const afterFill = (await watch()).find((r) => r.chainId === CHAIN)!;
    expect(afterFill.booked).toBe(0);
    expect(afterFill.matched).toBeGreaterThanOrEqual(2); // USDC out, EURC in

    // The owner sends 100 USDC out with a UserOperation of its own (its root validator).
    const client = t.deps.chain!.publicClient(CHAIN);
    const kernel = await devnetKernelSmartAccount(client, devnetChain(devnet, CHAIN), a.owner, 0n);
    expect(kernel.address).toBe(account);
    const bundler = createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) });
    const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
    const draft = await draftUserOperation(client, kernel, [
      {
        to: m.usdc.address,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [elsewhere, 100n * USD] }),
      },
    ]);
    const op = await signedUserOperation(kernel, draft, await bundler.estimateUserOperationGas(CHAIN, draft));
    const sent = await bundler.sendUserOperation(CHAIN, op);
    const receipt = await bundler.waitForUserOperationReceipt(CHAIN, sent, {
      timeoutMs: 30_000,
      pollIntervalMs: 100,
    });
    expect(receipt.success).toBe(true);
    const afterWithdrawal = (await watch()).find((r) => r.chainId === CHAIN)!;
    expect(afterWithdrawal.booked).toBe(2); // the USDC out, and the gas the operation paid

    // The statement of the month closes, for each token, at what the chain holds.
    const period = new Date().toISOString().slice(0, 7);
    const res = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/statements?wallet=${a.wallet}&period=${period}`,
      headers: { authorization: `Bearer ${a.sessionToken}` },
    });
    expect(res.statusCode).toBe(200);
    const rows = res.json<{ statement: { balances: StatementRow[] } }>().statement.balances;
    const row = (token: Address) =>
      rows.find(
        (r) =>
          r.ledger_account === `wallet:${CHAIN}:${a.wallet}` &&
          r.asset === `eip155:${CHAIN}/erc20:${token.toLowerCase()}`,
      );
    const usdcHeld = await onChain(m.usdc.address, account);
    const eurcHeld = await onChain(m.eurc.address, account);
    expect(usdcHeld).toBeLessThan(1_000n * USD - 100n * USD);
    expect(row(m.usdc.address)).toMatchObject({ symbol: 'USDC', closing: usdcHeld.toString() });
    expect(eurcHeld).toBeGreaterThan(0n);
    expect(row(m.eurc.address)?.closing).toBe(eurcHeld.toString());
    for (const r of rows) expect(BigInt(r.closing) >= 0n || r.ledger_account.includes(':prepaid')).toBe(true);
    // The native coin too: balance plus EntryPoint deposit, after the gas of the executor's operation
    // (its own booking) and of the owner's (the watcher's, from the EntryPoint's event).
    const native = rows.find(
      (r) => r.ledger_account === `wallet:${CHAIN}:${a.wallet}` && r.asset === `eip155:${CHAIN}/slip44:60`,
    );
    const deposit = await client.readContract({
      address: entryPoint07Address,
      abi: entryPoint07Abi,
      functionName: 'balanceOf',
      args: [account],
    });
    expect(native?.closing).toBe(((await client.getBalance({ address: account })) + deposit).toString());

    // The export lists the watched wallet with its chain's cursor.
    const exported = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/account/export',
      headers: { authorization: `Bearer ${a.sessionToken}` },
    });
    const watched = exported.json<{
      watched_wallets: {
        chain_id: number;
        address: string;
        role: string;
        opened_block: string;
        next_block: string;
      }[];
    }>().watched_wallets;
    const base = watched.find((w) => w.chain_id === CHAIN && w.address === a.wallet);
    expect(base).toMatchObject({ role: 'policy' });
    expect(BigInt(base!.next_block)).toBeGreaterThan(BigInt(base!.opened_block));
  });
});
