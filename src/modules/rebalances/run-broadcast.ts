// Getting a rebalance's recorded transactions on chain: broadcasting them (a refusal is logged,
// settling and replacing carry on), and replacing with higher fees, on the same nonce, those that
// have waited too long while their nonce is still free.

import type { Hex } from 'viem';
import { withTransaction } from '../../core/db/database.ts';
import { signer, type RebalanceRunDeps } from './run-deps.ts';
import { findRebalance, rebalanceTxs, updateRebalance, type RebalanceRow, type SignedTx } from './store.ts';
import { broadcast, readChainState, signReplacement } from './transactions.ts';

/** Broadcasts a recorded transaction; a refusal is logged (settling and replacing carry on). */
export async function send(deps: RebalanceRunDeps, t: SignedTx): Promise<void> {
  const refused = await broadcast(deps.chain, t);
  if (refused) {
    deps.log.warn(
      { rebalance: t.rebalanceId, tx: t.hash, attempt: t.attempt, why: refused.message.split('\n')[0] },
      'the node refused a recorded transaction; it is settled or replaced later',
    );
  }
}

/**
 * Replaces, with higher fees on the same nonce, every unconfirmed transaction of `groups` whose
 * latest attempt has waited longer than `cctp.replaceAfterMs` while its nonce is still free: an
 * underpriced transaction would otherwise hold the executor's nonce, and everything behind it,
 * forever. The rebalance's burn_tx or mint_tx follows the latest attempt.
 */
export async function replaceStale(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  groups: SignedTx[][],
): Promise<void> {
  const now = deps.clock.now().getTime();
  for (const g of groups) {
    const latest = g.at(-1)!;
    if (latest.state !== 'signed' || now - latest.createdAt.getTime() < deps.config.cctp.replaceAfterMs)
      continue;
    const taken = await deps.chain.transactionCount(latest.chainId, latest.sender as Hex, 'latest');
    if (BigInt(taken) > latest.nonce) continue; // something landed on it: settling decides what
    const account = signer(deps.config);
    const estimate = await readChainState(deps.chain, latest.chainId, account.address);
    const replacement = await withTransaction(deps.db, async (tx) => {
      const locked = await findRebalance(tx, row.id, null, { lock: true });
      if (!locked || locked.phase !== row.phase) return null;
      const attempts = (await rebalanceTxs(tx, row.id)).filter(
        (t) => t.chainId === latest.chainId && t.nonce === latest.nonce,
      );
      if (attempts.at(-1)?.hash !== latest.hash) return null; // another run replaced it already
      const next = await signReplacement(tx, deps.clock, account, latest, estimate);
      const field =
        latest.purpose === 'rebalance.mint'
          ? 'mint_tx'
          : latest.purpose === 'rebalance.burn'
            ? 'burn_tx'
            : null;
      if (field) {
        await updateRebalance(
          tx,
          row.id,
          row.phase,
          { [field]: next.hash.toLowerCase() as Hex },
          deps.clock.now(),
        );
      }
      return next;
    });
    if (!replacement) continue;
    deps.log.warn(
      { rebalance: row.id, replaced: latest.hash, by: replacement.hash, attempt: replacement.attempt },
      'unconfirmed transaction replaced with higher fees',
    );
    await send(deps, replacement);
  }
}
