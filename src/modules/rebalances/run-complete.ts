// Completing a rebalance awaiting attestation (POST /v1/rebalances/{id}/complete, and the hourly
// job): the burn's attestation asked for and checked against the burn, then the mint
// (`receiveMessage`) signed by the executor, recorded with its mint job, sent and settled; a
// message already delivered is booked as minted, an expired one waits for re-attestation.

import { getAddress, type Hex } from 'viem';
import { withTransaction } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { decodeMessage, receiveMessageCall } from './cctp.ts';
import { send } from './run-broadcast.ts';
import { cctpOf, crash, GAS, reload, signer, type RebalanceRunDeps } from './run-deps.ts';
import { enqueueMintCheck, nonceUsed, recordMintedElsewhere, settleMint } from './run-mint.ts';
import { MINT_CHECK_AFTER_MS, toRebalance, type Rebalance } from './service.ts';
import { findRebalance, updateRebalance, type RebalanceRow, type SignedTx } from './store.ts';
import { readChainState, signAndRecord } from './transactions.ts';

export type CompleteOutcome =
  | { state: 'minted' | 'mint_submitted'; rebalance: Rebalance }
  | { state: 'not_ready'; rebalance: Rebalance; retryAfterMs: number };

function notAwaiting(row: RebalanceRow): AppError {
  return new AppError(
    'CONFLICT',
    `Rebalance ${row.id} is not awaiting attestation (status ${row.status}, phase ${row.phase}).`,
    {
      remediation:
        row.phase === 'burn_pending' || row.phase === 'burn_submitted'
          ? 'The burn has not landed yet; read the rebalance again and complete it once its phase is awaiting_attestation.'
          : 'Nothing is left to complete; read the rebalance for its outcome.',
      next: [{ method: 'GET', path: `/v1/rebalances/${row.id}`, why: 'the rebalance as it is now' }],
    },
  );
}

/**
 * POST /v1/rebalances/{id}/complete, and the hourly job: asks for the burn's attestation and, once
 * it is ready, submits the mint (`receiveMessage`, signed by the executor) and waits up to
 * `waitMs` for it. A message whose nonce is used on the destination already is recorded as minted
 * without sending anything. Throws CONFLICT (409) when the rebalance is not awaiting attestation.
 */
export async function completeRebalance(
  deps: RebalanceRunDeps,
  id: string,
  accountId: string | null,
  waitMs: number,
): Promise<CompleteOutcome> {
  const row = await findRebalance(deps.db, id, accountId);
  if (!row) throw new AppError('NOT_FOUND', `No rebalance ${id} on this account.`);
  if (row.phase !== 'awaiting_attestation' || row.status !== 'executing' || !row.burn_tx)
    throw notAwaiting(row);
  const from = cctpOf(deps.config, row.from_chain_id);
  const to = cctpOf(deps.config, row.to_chain_id);
  const lookup = await deps.attestation.lookup(from.domain, row.burn_tx);
  // Not ready: the rebalance is unchanged; the answer says what the attestation service said.
  const notReady = (status: string, retryAfterMs: number): CompleteOutcome => ({
    state: 'not_ready',
    rebalance: toRebalance({
      ...row,
      report: { ...row.report, attestation: { status, checked_at: deps.clock.now().toISOString() } },
    }),
    retryAfterMs,
  });
  if (!lookup.ready) return notReady(lookup.status ?? lookup.why, lookup.retryAfterMs);
  crash(deps, 'after_attestation');
  const decoded = decodeMessage(lookup.message);
  if (
    decoded.sourceDomain !== from.domain ||
    decoded.destinationDomain !== to.domain ||
    decoded.burn.amount !== row.amount ||
    getAddress(decoded.burn.mintRecipient) !== getAddress(row.wallet)
  ) {
    throw new Error(`the attested message of rebalance ${id} does not match its burn`);
  }
  if (await nonceUsed(deps, to, decoded.nonce, row.to_chain_id)) {
    await recordMintedElsewhere(deps, row, lookup.message, decoded.nonce);
    const done = await reload(deps, id);
    return { state: done.phase === 'minted' ? 'minted' : 'mint_submitted', rebalance: toRebalance(done) };
  }
  // A message past its expiration block would only revert: Circle must sign it again first
  // (POST /v2/reattest/{nonce} on Iris), which this version does not do on its own.
  const expiresAt = decoded.burn.expirationBlock;
  if (expiresAt !== 0n && (await deps.chain.getBlockNumber(row.to_chain_id)) >= expiresAt) {
    deps.log.warn(
      { rebalance: id, nonce: decoded.nonce },
      'attested message expired; it needs re-attestation',
    );
    return notReady('expired', 3_600_000);
  }
  const account = signer(deps.config);
  const state = await readChainState(deps.chain, row.to_chain_id, account.address);
  const recorded: { mint: SignedTx | null } = { mint: null };
  await withTransaction(deps.db, async (tx) => {
    const locked = await findRebalance(tx, id, null, { lock: true });
    if (locked?.phase !== 'awaiting_attestation') return;
    [recorded.mint = null] = await signAndRecord(tx, deps.clock, account, row.to_chain_id, state, id, [
      {
        purpose: 'rebalance.mint',
        to: to.messageTransmitter,
        data: receiveMessageCall(lookup.message, lookup.attestation),
        gas: GAS.mint,
      },
    ]);
    await updateRebalance(
      tx,
      id,
      'awaiting_attestation',
      {
        phase: 'mint_submitted',
        mint_tx: recorded.mint!.hash.toLowerCase() as Hex,
        message: lookup.message,
        message_nonce: decoded.nonce.toLowerCase() as Hex,
      },
      deps.clock.now(),
    );
    // Whoever finishes it, within a minute of the broadcast, even if this process dies now.
    await enqueueMintCheck(tx, deps, id, MINT_CHECK_AFTER_MS);
  });
  if (!recorded.mint) throw notAwaiting(await reload(deps, id));
  await send(deps, recorded.mint);
  crash(deps, 'after_mint_broadcast');
  await settleMint(deps, id, waitMs);
  const done = await reload(deps, id);
  return { state: done.phase === 'minted' ? 'minted' : 'mint_submitted', rebalance: toRebalance(done) };
}
