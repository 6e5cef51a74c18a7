// A settled slice, ledgered: in the transaction that writes the slice's outcome (slices.ts,
// `landSlice`'s `onSettled`), one balanced group per slice with what its logs say moved (the fill:
// the wallet's side and the venue's) and the gas it paid (to `external:<chain>`), stamped with
// intent, slice, transaction hash and the pinned policy's hash; the slice appended to the intent's
// report; and `intent.slice_settled`. So a fill is ledgered before anything else happens to its
// intent. The relayer's prefund deposits are booked on their own (smart-account, prefund.ts).

import { getAddress, type Address } from 'viem';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { claimChainTransaction } from '../chainwatch/index.ts';
import { emitEvent } from '../events/index.ts';
import { findIntentById, saveIntentReport } from '../intents/index.ts';
import {
  externalAccount,
  nativeAsset,
  postGroup,
  walletAccount,
  type LedgerEntryInput,
} from '../ledger/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { bookedDepositsFor } from '../smart-account/index.ts';
import { accountMovements, ETH_SLIP44, fillEntries, NATIVE, splitLogs } from './fills.ts';
import {
  addToTotals,
  priceOf,
  referencePrice,
  runReport,
  versusReferenceBps,
  wallClockMs,
  type SlicePartReport,
  type SliceReport,
} from './report.ts';
import type { SliceOutcome } from './slices.ts';
import type { SliceRecord } from './store.ts';

/** The decimals of a token of the chain (the native placeholder and unknown tokens: 18). */
export function decimalsOf(registry: TokenRegistry, chainId: number, token: string): number {
  return registry.findToken(chainId, token)?.decimals ?? 18;
}

/**
 * The ledger entries of gas paid (and of a prefund deposit recorded the old way, with its slice)
 * for the wallet, balanced against the outside.
 */
function gasEntries(
  chainId: number,
  wallet: string,
  gasWei: bigint,
  sponsoredWei: bigint,
): LedgerEntryInput[] {
  const asset = nativeAsset(chainId, ETH_SLIP44);
  const net = sponsoredWei - gasWei;
  if (net === 0n) return [];
  return [
    { account: walletAccount(chainId, wallet), asset, amount: net },
    { account: externalAccount(chainId), asset, amount: -net },
  ];
}

/** The slice's timings with the landing (recorded to now) and the total (the step's start to now). */
function timingsNow(t: NonNullable<SliceRecord['facts']['timings']>): Record<string, number> {
  const now = wallClockMs();
  return { ...t.ms, land: now - t.recorded_at_ms, total: now - t.started_at_ms };
}

/** Books a slice's outcome in `tx` (see the file comment). Called once per slice. */
export async function bookSlice(
  tx: DbExecutor,
  deps: { clock: Clock; registry: TokenRegistry },
  slice: SliceRecord,
  outcome: SliceOutcome,
): Promise<SliceReport> {
  const row = await findIntentById(tx, slice.intentId, true);
  if (!row) throw new Error(`intent ${slice.intentId} is missing`);
  const chainId = row.chain_id;
  const wallet = getAddress(row.wallet);
  const sellToken = row.params.sell_token;
  const buyToken = row.params.buy_token;
  // Relayer deposits are booked on their own (smart-account), whatever the slice's fate: here they
  // are only reported. A slice recorded before that (its facts carry `sponsored_wei`) still books
  // its deposit with its gas.
  const legacySponsoredWei = BigInt(slice.facts.sponsored_wei ?? '0');
  const sponsoredWei =
    slice.facts.sponsored_wei === undefined
      ? await bookedDepositsFor(tx, slice.intentId, slice.seq)
      : legacySponsoredWei;
  const decimals = {
    sell: decimalsOf(deps.registry, chainId, sellToken),
    buy: decimalsOf(deps.registry, chainId, buyToken),
  };
  let sold = 0n;
  let bought = 0n;
  let gasWei = 0n;
  let splitReport: (SlicePartReport & { moves: Map<string, bigint> })[] | null = null;
  if (outcome.state !== 'dropped') {
    gasWei = outcome.gasCostWei;
    const wrapped = (deps.registry.chain(chainId)?.wrappedNative ?? null) as Address | null;
    const moves = accountMovements(outcome.logs, wallet, wrapped);
    // A gas top-up buys the native coin: its Withdrawal log reads as native in.
    sold = -(moves.get(sellToken) ?? 0n);
    bought = moves.get(row.kind === 'gas_topup' ? NATIVE : buyToken) ?? 0n;
    // A slice split between venues books each part against its own venue.
    const parts = slice.facts.split;
    const segments = parts ? splitLogs(outcome.logs, wallet, sellToken, parts) : null;
    if (parts && segments) {
      splitReport = parts.map((p, i) => {
        const m = accountMovements(segments[i]!, wallet, wrapped);
        return {
          venue: p.venue,
          sell_amount: p.sell_amount,
          sold: (-(m.get(sellToken) ?? 0n)).toString(),
          bought: (m.get(buyToken) ?? 0n).toString(),
          quoted_buy_amount: p.quoted_buy_amount,
          min_buy_amount: p.min_buy_amount,
          moves: m,
        };
      });
    }
    const fills =
      outcome.state !== 'landed'
        ? []
        : splitReport
          ? splitReport.flatMap((p) => fillEntries(chainId, row.wallet, p.venue, p.moves))
          : fillEntries(chainId, row.wallet, slice.venue, moves);
    const entries = [...fills, ...gasEntries(chainId, row.wallet, gasWei, legacySponsoredWei)];
    if (entries.length > 0) {
      const booked = await postGroup(tx, deps.clock, {
        settlementId: `intent:${row.id}:slice:${slice.seq}`,
        accountId: row.account_id,
        kind: outcome.state === 'landed' ? `fill.${row.kind}` : 'gas',
        entries,
        policyHash: `sha256:${row.policy_hash}`,
        memo: {
          wallet: row.wallet,
          intent: row.id,
          slice: slice.seq,
          venue: slice.venue,
          tx_hash: outcome.txHash.toLowerCase(),
          user_op_hash: slice.hash.toLowerCase(),
        },
      });
      if (!booked.ok) {
        throw new Error(`slice ${slice.seq} of intent ${row.id} could not be ledgered: ${booked.reason}`);
      }
      // The operation's transfers at the wallet are this group's: the chain watcher matches them.
      await claimChainTransaction(tx, deps.clock, {
        chainId,
        txHash: outcome.txHash,
        wallet: row.wallet,
        groupId: booked.groupId,
        blockNumber: outcome.blockNumber ?? null,
      });
    }
  }
  const reference = slice.facts.reference;
  const entry: SliceReport = {
    seq: slice.seq,
    part: slice.facts.part,
    venue: slice.venue,
    state: outcome.state,
    sell_amount: slice.facts.sell_amount,
    sold: sold.toString(),
    bought: bought.toString(),
    quoted_buy_amount: slice.facts.quoted_buy_amount,
    min_buy_amount: slice.facts.min_buy_amount,
    ...(slice.facts.venue_fee_amount ? { venue_fee_amount: slice.facts.venue_fee_amount } : {}),
    ...(slice.facts.routing ? { routing: slice.facts.routing } : {}),
    ...(splitReport ? { split: splitReport.map(({ moves: _moves, ...p }) => p) } : {}),
    price: priceOf(sold, bought, decimals.sell, decimals.buy),
    reference_price: referencePrice(reference, decimals.sell, decimals.buy),
    vs_reference_bps: versusReferenceBps(sold, bought, reference),
    user_op_hash: slice.hash.toLowerCase(),
    tx_hash: outcome.state === 'dropped' ? null : outcome.txHash.toLowerCase(),
    gas_wei: gasWei.toString(),
    sponsored_wei: sponsoredWei.toString(),
    ...(outcome.state === 'reverted' && outcome.revertReason ? { revert_reason: outcome.revertReason } : {}),
    settled_at: deps.clock.now().toISOString(),
    ...(slice.facts.timings ? { timings_ms: timingsNow(slice.facts.timings) } : {}),
  };
  const report = runReport(row);
  report.slices.push(entry);
  report.totals = addToTotals(report.totals, { sold, bought, gasWei, sponsoredWei }, decimals);
  await saveIntentReport(tx, row.id, report, deps.clock.now());
  await emitEvent(tx, deps.clock, {
    accountId: row.account_id,
    kind: 'intent.slice_settled',
    subject: row.id,
    payload: { id: row.id, wallet: row.wallet, ...entry },
  });
  return entry;
}
