// A wallet's holdings now (GET /v1/wallets/{address}/balances): per chain where the account's
// wallet is watched, for each registry token and the native coin, what the account's books hold,
// what the chain holds at its latest confirmed block (the head less the confirmation depth), what
// the blocks since then changed, and how far the watcher has read.

import type { Address } from 'viem';
import { notFound, unavailable } from '../../core/errors/app-error.ts';
import { assetMetadata } from '../registry/index.ts';
import { ledgerTotalsByAsset, walletAccount } from '../ledger/index.ts';
import { readCursor } from './store.ts';
import { chainHoldingsAt, type WatchDeps } from './watcher.ts';

export interface HoldingView {
  asset: string;
  symbol: string | null;
  decimals: number | null;
  /** The account's books: the sum of the wallet's entries in its groups. */
  ledger: string;
  /** The chain at `block` (the latest confirmed one). */
  chain: string;
  /** What the blocks after `block`, up to the head, changed. */
  unconfirmed: string;
}

export interface ChainHoldingsView {
  chain_id: number;
  block: string;
  head: string;
  /** The last block the chain watcher booked (null before its first run). */
  watched_through: string | null;
  holdings: HoldingView[];
}

/** The account's books of a wallet on a chain, per asset. */
async function accountBooks(
  deps: Pick<WatchDeps, 'db'>,
  accountId: string,
  chainId: number,
  wallet: string,
): Promise<Map<string, bigint>> {
  return ledgerTotalsByAsset(deps.db, walletAccount(chainId, wallet), { accountId });
}

/** See the file comment. 404 when the account watches the wallet on none of the chains asked for. */
export async function walletHoldings(
  deps: WatchDeps,
  accountId: string,
  wallet: string,
  chainId: number | null,
): Promise<{ wallet: string; chains: ChainHoldingsView[] }> {
  const address = wallet.toLowerCase();
  let q = deps.db
    .selectFrom('chain_watch_wallets')
    .select('chain_id')
    .where('account_id', '=', accountId)
    .where('address', '=', address);
  if (chainId !== null) q = q.where('chain_id', '=', chainId);
  const chains = (await q.orderBy('chain_id').execute()).map((r) => r.chain_id);
  if (chains.length === 0) {
    throw notFound(
      `The account keeps no books for ${address}${chainId === null ? '' : ` on chain ${chainId}`}.`,
      {
        remediation:
          'A wallet is watched once a policy names it (PUT /v1/policies): its holdings read from the next run ' +
          'of the chain watcher, a few seconds later.',
      },
    );
  }
  const out: ChainHoldingsView[] = [];
  for (const id of chains) {
    const client = deps.chain.publicClient(id);
    let head: bigint;
    let confirmed: Map<string, bigint>;
    let latest: Map<string, bigint> | null;
    let block: bigint;
    try {
      head = await deps.chain.getBlockNumber(id);
      const depth = BigInt(deps.config.chainWatch.confirmations[id] ?? 0);
      block = head > depth ? head - depth : 0n;
      const at = (n: bigint) => chainHoldingsAt(client, deps.registry, id, address as Address, n);
      [confirmed, latest] = await Promise.all([at(block), block === head ? null : at(head)]);
    } catch (err) {
      throw unavailable(
        `Chain ${id} did not answer the holdings read: ${(err as Error).message.split('\n')[0]}`,
        {
          remediation: 'Retry in a moment: the read changes nothing.',
        },
      );
    }
    const books = await accountBooks(deps, accountId, id, address);
    const cursor = await readCursor(deps.db, id);
    out.push({
      chain_id: id,
      block: block.toString(),
      head: head.toString(),
      watched_through: cursor === null || cursor === 0n ? null : (cursor - 1n).toString(),
      holdings: [...confirmed].map(([asset, onChain]) => {
        const meta = assetMetadata(deps.registry, asset);
        return {
          asset,
          symbol: meta.symbol,
          decimals: meta.decimals,
          ledger: (books.get(asset) ?? 0n).toString(),
          chain: onChain.toString(),
          unconfirmed: ((latest?.get(asset) ?? onChain) - onChain).toString(),
        };
      }),
    });
  }
  return { wallet: address, chains: out };
}
