// Openings, for the chain watcher: a wallet's holdings on chain at a block (every registry token
// and the native coin, an EntryPoint deposit included), and the opening of every watched wallet
// that has none booked at the block before the cursor against `external:<chain>`.

import { erc20Abi, parseAbi, type Address } from 'viem';
import { ENTRY_POINT_V07_ADDRESS } from '../../adapters/bundler/port.ts';
import type { ChainClient } from '../../adapters/chain/port.ts';
import { withTransaction } from '../../core/db/database.ts';
import {
  chainNativeAsset,
  erc20Asset,
  externalAccount,
  transfer,
  walletAccount,
  type BatchedGroup,
  type LedgerEntryInput,
} from '../ledger/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { ledgerHoldingsAt, markOpened, rememberBlocks, watchedWallets } from './store.ts';
import { blockFacts, bookedAt, currentCursor, holdAt, postInStatements, type Run } from './watch-run.ts';

const entryPointAbi = parseAbi(['function balanceOf(address account) view returns (uint256)']);

/** Wallets opened in one transaction. */
const OPEN_CHUNK = 100;

/** The native coin a wallet holds: its balance and, for a smart account, its EntryPoint deposit. */
async function nativeHoldings(client: ChainClient, wallet: Address, blockNumber: bigint): Promise<bigint> {
  const [balance, deposit] = await Promise.all([
    client.getBalance({ address: wallet, blockNumber }),
    client
      .readContract({
        address: ENTRY_POINT_V07_ADDRESS,
        abi: entryPointAbi,
        functionName: 'balanceOf',
        args: [wallet],
        blockNumber,
      })
      .catch(() => 0n),
  ]);
  return balance + deposit;
}

/** A wallet's holdings at a block: every registry token of the chain and the native coin, by asset. */
export async function chainHoldingsAt(
  client: ChainClient,
  registry: TokenRegistry,
  chainId: number,
  wallet: Address,
  blockNumber: bigint,
): Promise<Map<string, bigint>> {
  const tokens = registry.chain(chainId)?.tokens ?? [];
  const [native, ...balances] = await Promise.all([
    nativeHoldings(client, wallet, blockNumber),
    ...tokens.map((t) =>
      client
        .readContract({
          address: t.address,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [wallet],
          blockNumber,
        })
        .catch(() => 0n),
    ),
  ]);
  const out = new Map<string, bigint>([[chainNativeAsset(chainId), native]]);
  tokens.forEach((t, i) => out.set(erc20Asset(chainId, t.address), balances[i]!));
  return out;
}

/**
 * Books the opening of every watched wallet that has none, at the block before the cursor: for each
 * registry token and the native coin, the chain's balance there less what the ledger held for the
 * wallet then, against `external:<chain>`.
 */
export async function openWallets(run: Run): Promise<void> {
  const { deps, chainId } = run;
  const unopened = (await watchedWallets(deps.db, chainId)).filter((w) => w.openedBlock === null);
  if (unopened.length === 0) return;
  const cursor = await currentCursor(run);
  const block = cursor - 1n;
  const facts = await blockFacts(run, block);
  for (let i = 0; i < unopened.length; i += OPEN_CHUNK) {
    const chunk = unopened.slice(i, i + OPEN_CHUNK);
    const holdings = await Promise.all(
      chunk.map((w) => chainHoldingsAt(run.client, deps.registry, chainId, w.address as Address, block)),
    );
    await withTransaction(deps.db, async (tx) => {
      await holdAt(run, tx, cursor);
      const groups: BatchedGroup[] = [];
      const walletOf: string[] = [];
      for (const [j, w] of chunk.entries()) {
        const ledger = await ledgerHoldingsAt(tx, chainId, w.address, block);
        const entries: LedgerEntryInput[] = [];
        for (const [asset, onChain] of holdings[j]!) {
          const diff = onChain - (ledger.get(asset) ?? 0n);
          if (diff !== 0n)
            entries.push(
              ...transfer(walletAccount(chainId, w.address), externalAccount(chainId), asset, diff),
            );
        }
        if (entries.length === 0) continue;
        walletOf.push(w.address);
        groups.push({
          at: bookedAt(run, facts.time),
          params: {
            settlementId: `chain:opening:${chainId}:${w.address}:${block}`,
            accountId: w.accountId,
            kind: 'chain.opening',
            entries,
            memo: { wallet: w.address, opening: true, block: block.toString(), block_hash: facts.hash },
          },
        });
      }
      const groupOf = new Map<string, string>();
      (await postInStatements(tx, groups)).forEach((r, k) => {
        if (!r.ok) throw new Error(`opening ${groups[k]!.params.settlementId} refused: ${r.reason}`);
        groupOf.set(walletOf[k]!, r.groupId);
      });
      for (const w of chunk) await markOpened(tx, chainId, w.address, block, groupOf.get(w.address) ?? null);
      await rememberBlocks(tx, chainId, [{ number: block, hash: facts.hash }]);
    });
    run.report.opened += chunk.length;
  }
}
