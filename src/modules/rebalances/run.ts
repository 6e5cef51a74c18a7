// Running a rebalance: the burn (approve + depositForBurn, signed by the executor key, recorded
// before broadcast), the attestation and the mint (receiveMessage on the destination), each step
// re-entrant after a crash: it reads what was recorded and what the chains say, and carries on
// from there. docs/rebalances.md has the phases.

import { getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import type { AttestationPort } from '../../adapters/attestation/port.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { CctpChain, Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { enqueueJob } from '../../core/jobs/index.ts';
import { claimChainTransaction } from '../chainwatch/index.ts';
import { emitEvent } from '../events/index.ts';
import { postGroup, type LedgerEntryInput } from '../ledger/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import {
  approveCall,
  decodeMessage,
  depositForBurnCall,
  messageSentIn,
  messageTransmitterAbi,
  mintIn,
  receiveMessageCall,
} from './cctp.ts';
import { burnEntries, gasOnlyEntries, mintEntries, type BridgeLeg } from './ledger.ts';
import { MINT_CHECK_AFTER_MS, MINT_JOB, toRebalance, type Rebalance } from './service.ts';
import {
  findRebalance,
  openRebalances,
  rebalanceTxs,
  updateRebalance,
  type RebalanceChange,
  type RebalancePhase,
  type RebalanceReport,
  type RebalanceRow,
  type SignedTx,
} from './store.ts';
import {
  broadcast,
  executorAccount,
  byNonce,
  gasWeiOf,
  readChainState,
  settleNonce,
  signAndRecord,
  signReplacement,
  type Settled,
} from './transactions.ts';

export interface RebalanceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RebalanceRunDeps {
  config: Config;
  clock: Clock;
  db: Db;
  chain: ChainPort;
  registry: TokenRegistry;
  attestation: AttestationPort;
  log: RebalanceLog;
}

/** Gas limits: generous (only what is used is paid); the burn cannot be estimated before its approve lands. */
const GAS = { approve: 120_000n, burn: 400_000n, mint: 500_000n } as const;
/** How far back the destination's logs are searched for a mint someone else sent. */
const MINT_LOOKBACK_BLOCKS = 50_000n;

function cctpOf(config: Config, chainId: number): CctpChain {
  const c = config.cctp.chains[chainId];
  if (!c) throw new Error(`chain ${chainId} has no CCTP contracts configured`);
  return c;
}

function usdcOf(registry: TokenRegistry, chainId: number): Address {
  const t = registry.findToken(chainId, 'USDC');
  if (!t) throw new Error(`the registry has no USDC on chain ${chainId}`);
  return getAddress(t.address);
}

function legOf(deps: RebalanceRunDeps, row: RebalanceRow): BridgeLeg {
  return {
    fromChainId: row.from_chain_id,
    toChainId: row.to_chain_id,
    wallet: row.wallet,
    fromUsdc: usdcOf(deps.registry, row.from_chain_id).toLowerCase(),
    toUsdc: usdcOf(deps.registry, row.to_chain_id).toLowerCase(),
  };
}

function signer(config: Config) {
  if (!config.executorPrivateKey) throw new Error('no executor key is configured');
  return executorAccount(config.executorPrivateKey);
}

const crash = (deps: RebalanceRunDeps, at: NonNullable<Config['cctp']['faultCrash']>) => {
  // Fault injection for the crash tests (never in production): die right here.
  if (deps.config.cctp.faultCrash === at) process.kill(process.pid, 'SIGKILL');
};

async function reload(deps: RebalanceRunDeps, id: string): Promise<RebalanceRow> {
  const row = await findRebalance(deps.db, id, null);
  if (!row) throw new Error(`rebalance ${id} vanished`);
  return row;
}

/** A ledger booking of a rebalance: settlement `rebalance:<id>:<part>`. */
interface Booking {
  part: 'burn' | 'mint' | 'gas';
  kind: string;
  entries: LedgerEntryInput[];
  memo?: Record<string, unknown>;
  /** The transaction whose transfers at the wallet this booking explains (the chain watcher's match). */
  claim?: { chainId: number; txHash: Hex; blockNumber: bigint | null };
}

/**
 * Moves a rebalance on from `fromPhase` and, in the same transaction and only if it moved, books
 * `booking` and emits `event` (its payload after the rebalance's id, chains and amount). False
 * when another run had moved it already.
 */
async function moveOn(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  fromPhase: RebalancePhase,
  change: RebalanceChange,
  booking: Booking | null,
  event: { kind: string; payload: Record<string, unknown> },
): Promise<boolean> {
  return withTransaction(deps.db, async (tx) => {
    if (!(await updateRebalance(tx, row.id, fromPhase, change, deps.clock.now()))) return false;
    if (booking) {
      const booked = await postGroup(tx, deps.clock, {
        settlementId: `rebalance:${row.id}:${booking.part}`,
        accountId: row.account_id,
        kind: booking.kind,
        policyHash: `sha256:${row.policy_hash}`,
        entries: booking.entries,
        memo: { rebalance: row.id, ...booking.memo },
      });
      // A booking under this rebalance's settlement id with other entries is a bug: stop here.
      if (!booked.ok)
        throw new Error(`rebalance ${row.id}: booking ${booking.part} refused (${booked.reason})`);
      if (booking.claim) {
        await claimChainTransaction(tx, deps.clock, {
          ...booking.claim,
          wallet: row.wallet,
          groupId: booked.groupId,
        });
      }
    }
    await emitEvent(tx, deps.clock, {
      accountId: row.account_id,
      kind: event.kind,
      subject: row.id,
      payload: {
        id: row.id,
        from_chain_id: row.from_chain_id,
        to_chain_id: row.to_chain_id,
        amount: row.amount.toString(),
        ...event.payload,
      },
    });
    return true;
  });
}

/** Ends a rebalance that moved nothing (`aborted` with a reason, or `cancelled`), with its event. */
async function end(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  how: 'aborted' | 'cancelled',
  reason: string,
  detail: string,
  gas?: { chainId: number; wei: bigint },
): Promise<void> {
  const report: RebalanceReport = {
    ...row.report,
    ...(how === 'aborted' ? { abort: { reason, detail } } : { cancel: { reason, detail } }),
    ...(gas && gas.wei > 0n ? { gas_wei: { ...row.report.gas_wei, [gas.chainId]: gas.wei.toString() } } : {}),
  };
  const paid = gas && gas.wei > 0n;
  await moveOn(
    deps,
    row,
    row.phase,
    { status: how, report },
    paid ? { part: 'gas', kind: 'gas', entries: gasOnlyEntries(gas.chainId, row.wallet, gas.wei) } : null,
    // rebalance.aborted or rebalance.cancelled
    { kind: `rebalance.${how}`, payload: { reason, detail } },
  );
  deps.log.info({ rebalance: row.id, how, reason }, 'rebalance ended without moving value');
}

export type BurnStep = { state: 'done' } | { state: 'waiting' };

/**
 * One run of the burn: signs and records approve + depositForBurn (from `burn_pending`), sends
 * what is recorded, waits for the receipts and books the burn (`awaiting_attestation`). Re-entrant:
 * after a crash it sends the recorded bytes again. `waiting` when the receipts did not come in time.
 */
export async function runBurn(deps: RebalanceRunDeps, id: string): Promise<BurnStep> {
  let row = await reload(deps, id);
  if (row.status !== 'planned' && row.status !== 'executing') return { state: 'done' };
  if (row.phase === 'burn_pending') {
    try {
      await assertExecutionEnabled(
        deps.db,
        { accountId: row.account_id, wallet: row.wallet },
        { fresh: true },
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'EXECUTION_DISABLED') throw err;
      await end(deps, row, 'cancelled', 'EXECUTION_DISABLED', err.message);
      return { state: 'done' };
    }
    const account = signer(deps.config);
    const from = cctpOf(deps.config, row.from_chain_id);
    const to = cctpOf(deps.config, row.to_chain_id);
    const usdc = usdcOf(deps.registry, row.from_chain_id);
    const state = await readChainState(deps.chain, row.from_chain_id, account.address);
    const burn = depositForBurnCall({
      amount: row.amount,
      destinationDomain: to.domain,
      mintRecipient: getAddress(row.wallet),
      burnToken: usdc,
      destinationCaller: account.address,
      maxFee: row.max_fee,
      finality: row.finality,
    });
    await withTransaction(deps.db, async (tx) => {
      const locked = await findRebalance(tx, id, null, { lock: true });
      if (locked?.phase !== 'burn_pending' || locked.status !== 'planned') return;
      const signed = await signAndRecord(tx, deps.clock, account, row.from_chain_id, state, id, [
        {
          purpose: 'rebalance.approve',
          to: usdc,
          data: approveCall(from.tokenMessenger, row.amount),
          gas: GAS.approve,
        },
        { purpose: 'rebalance.burn', to: from.tokenMessenger, data: burn, gas: GAS.burn },
      ]);
      await updateRebalance(
        tx,
        id,
        'burn_pending',
        { status: 'executing', phase: 'burn_submitted', burn_tx: signed[1]!.hash.toLowerCase() as Hex },
        deps.clock.now(),
      );
    });
    row = await reload(deps, id);
  }
  if (row.phase !== 'burn_submitted') return { state: 'done' };

  const groups = byNonce((await rebalanceTxs(deps.db, id)).filter((t) => t.purpose !== 'rebalance.mint'));
  for (const g of groups) if (g.at(-1)!.state === 'signed') await send(deps, g.at(-1)!);
  crash(deps, 'after_burn_broadcast');
  const settled: Settled[] = [];
  for (const g of groups) {
    const s = await settleNonce(deps.db, deps.chain, deps.clock, g, deps.config.cctp.receiptTimeoutMs);
    if (!s) {
      await replaceStale(deps, row, groups);
      return { state: 'waiting' };
    }
    settled.push(s);
  }
  await recordBurn(deps, row, settled);
  return { state: 'done' };
}

/** Broadcasts a recorded transaction; a refusal is logged (settling and replacing carry on). */
async function send(deps: RebalanceRunDeps, t: SignedTx): Promise<void> {
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
async function replaceStale(deps: RebalanceRunDeps, row: RebalanceRow, groups: SignedTx[][]): Promise<void> {
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

/** Books what the burn's transactions did: the burn (awaiting attestation), or an abort. */
async function recordBurn(deps: RebalanceRunDeps, row: RebalanceRow, txs: Settled[]): Promise<void> {
  const gasWei = txs.reduce((sum, t) => sum + gasWeiOf(t), 0n);
  // The burn alone decides: it may land on an allowance an earlier approve left even when its own
  // approve did not, and then the USDC is gone from the wallet whatever became of the approve.
  const burn = txs.find((t) => t.purpose === 'rebalance.burn');
  if (!burn) throw new Error(`rebalance ${row.id} is burn_submitted without a recorded burn`);
  if (burn.state !== 'mined') {
    const dropped = burn.state === 'dropped';
    const detail = dropped
      ? `the burn transaction ${burn.hash} was never mined: its nonce went to another transaction`
      : `the burn transaction ${burn.hash} reverted; nothing left the wallet`;
    await end(deps, row, 'aborted', dropped ? 'BURN_DROPPED' : 'BURN_REVERTED', detail, {
      chainId: row.from_chain_id,
      wei: gasWei,
    });
    return;
  }
  const receipt = await deps.chain.getReceipt(burn.chainId, burn.hash);
  const message = receipt
    ? messageSentIn(receipt.logs, cctpOf(deps.config, row.from_chain_id).messageTransmitter)
    : null;
  const leg = legOf(deps, row);
  const report: RebalanceReport = { ...row.report, gas_wei: { [row.from_chain_id]: gasWei.toString() } };
  await moveOn(
    deps,
    row,
    'burn_submitted',
    {
      phase: 'awaiting_attestation',
      burn_tx: burn.hash.toLowerCase() as Hex,
      report,
      ...(message ? { message } : {}),
    },
    {
      part: 'burn',
      kind: 'bridge.burn',
      entries: burnEntries(leg, row.amount, gasWei),
      memo: { tx: burn.hash },
      claim: { chainId: row.from_chain_id, txHash: burn.hash, blockNumber: receipt?.blockNumber ?? null },
    },
    { kind: 'rebalance.burned', payload: { burn_tx: burn.hash } },
  );
  deps.log.info({ rebalance: row.id, burn: burn.hash }, 'rebalance burned; awaiting attestation');
}

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

async function nonceUsed(
  deps: RebalanceRunDeps,
  to: CctpChain,
  nonce: Hex,
  chainId: number,
): Promise<boolean> {
  const used = await deps.chain.publicClient(chainId).readContract({
    address: to.messageTransmitter,
    abi: messageTransmitterAbi,
    functionName: 'usedNonces',
    args: [nonce],
  });
  return used !== 0n;
}

/**
 * From `mint_submitted`: sends the recorded mint again if it is not on chain, waits up to `waitMs`
 * for its receipt and books it (`minted`). A reverted or dropped mint goes back to
 * `awaiting_attestation` (the next completion asks again), unless the message's nonce is used:
 * then it was minted, and is recorded so.
 */
export async function settleMint(deps: RebalanceRunDeps, id: string, waitMs: number): Promise<void> {
  const row = await reload(deps, id);
  if (row.phase !== 'mint_submitted' || row.status !== 'executing') return;
  const mints = byNonce((await rebalanceTxs(deps.db, id)).filter((t) => t.purpose === 'rebalance.mint')).at(
    -1,
  );
  if (!mints) throw new Error(`rebalance ${id} is mint_submitted without a recorded mint`);
  const mint = mints.at(-1)!;
  if (mint.state === 'signed' && !(await deps.chain.getReceipt(mint.chainId, mint.hash)))
    await send(deps, mint);
  const s = await settleNonce(deps.db, deps.chain, deps.clock, mints, waitMs);
  if (!s) {
    await replaceStale(deps, row, [mints]);
    return;
  }
  if (s.state === 'mined') {
    await recordMint(deps, row, s.hash, gasWeiOf(s));
    return;
  }
  // A mint that reverted still cost gas: booked on its own, once per transaction.
  await bookGas(deps, row, row.to_chain_id, s.hash, gasWeiOf(s));
  const to = cctpOf(deps.config, row.to_chain_id);
  if (row.message_nonce && (await nonceUsed(deps, to, row.message_nonce, row.to_chain_id))) {
    await recordMintedElsewhere(deps, row, row.message!, row.message_nonce);
    return;
  }
  const report: RebalanceReport = {
    ...row.report,
    mint_failures: [...(row.report.mint_failures ?? []), { tx: s.hash, at: deps.clock.now().toISOString() }],
  };
  await updateRebalance(
    deps.db,
    id,
    'mint_submitted',
    { phase: 'awaiting_attestation', report },
    deps.clock.now(),
  );
  deps.log.warn(
    { rebalance: id, mint: s.hash, state: s.state },
    'mint did not land; the rebalance awaits attestation again',
  );
}

/** Books a mint the executor's transaction `txHash` made, read from its receipt. */
async function recordMint(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  txHash: Hex,
  gasWei: bigint,
): Promise<void> {
  const receipt = await deps.chain.getReceipt(row.to_chain_id, txHash);
  const to = cctpOf(deps.config, row.to_chain_id);
  const got = receipt ? mintIn(receipt.logs, to.tokenMessenger, getAddress(row.wallet)) : null;
  const fee = got ? got.fee : row.message ? decodeMessage(row.message).burn.feeExecuted : 0n;
  await bookMint(deps, row, txHash, fee, gasWei);
}

/**
 * The transaction that delivered the message with `nonce` on the destination, from the
 * transmitter's `MessageReceived` logs of the last MINT_LOOKBACK_BLOCKS blocks; null when it is not
 * found there, or the node refuses so wide a log query (the mint is then recorded without it).
 */
async function receivedIn(deps: RebalanceRunDeps, chainId: number, nonce: Hex): Promise<Hex | null> {
  const to = cctpOf(deps.config, chainId);
  const client = deps.chain.publicClient(chainId);
  try {
    // The nonce is used, so its log exists; a node's log search can lag its head by a moment
    // (eth_getLogs on real providers, and on anvil), so it is asked a few times before giving up.
    for (let attempt = 0; ; attempt++) {
      // The head as it is now: a cached block number would end the search before the mint.
      const latest = await client.getBlockNumber({ cacheTime: 0 });
      const logs = await client.getLogs({
        address: to.messageTransmitter,
        event: messageTransmitterAbi.find((x) => x.type === 'event' && x.name === 'MessageReceived')!,
        args: { nonce },
        fromBlock: latest > MINT_LOOKBACK_BLOCKS ? latest - MINT_LOOKBACK_BLOCKS : 0n,
        toBlock: latest,
      });
      const parsed = parseEventLogs({ abi: messageTransmitterAbi, eventName: 'MessageReceived', logs });
      const found = (parsed[0]?.transactionHash ?? null) as Hex | null;
      if (found || attempt >= 2) return found;
      await new Promise((r) => setTimeout(r, 300));
    }
  } catch (err) {
    deps.log.warn({ err, chainId, nonce }, 'the mint of a received message could not be looked up');
    return null;
  }
}

/** Books gas the executor paid for a transaction that moved nothing else (once per transaction). */
async function bookGas(deps: RebalanceRunDeps, row: RebalanceRow, chainId: number, hash: Hex, wei: bigint) {
  if (wei <= 0n) return;
  const booked = await postGroup(deps.db, deps.clock, {
    settlementId: `rebalance:${row.id}:gas:${hash.toLowerCase()}`,
    accountId: row.account_id,
    kind: 'gas',
    policyHash: `sha256:${row.policy_hash}`,
    entries: gasOnlyEntries(chainId, row.wallet, wei),
    memo: { rebalance: row.id, tx: hash },
  });
  if (!booked.ok) throw new Error(`gas of ${hash} could not be booked: ${booked.reason}`);
}

/**
 * A message whose nonce is used on the destination: minted by an earlier attempt of ours whose
 * record was lost, or by someone else. Found in the transmitter's `MessageReceived` logs when it
 * can be; booked as minted, with nothing sent.
 */
async function recordMintedElsewhere(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  message: Hex,
  nonce: Hex,
): Promise<void> {
  const txHash = await receivedIn(deps, row.to_chain_id, nonce);
  const fee = decodeMessage(message).burn.feeExecuted;
  const ours = txHash
    ? (await rebalanceTxs(deps.db, row.id)).find((t) => t.hash === txHash.toLowerCase())
    : undefined;
  let gasWei = 0n;
  if (ours) {
    const s = await settleNonce(deps.db, deps.chain, deps.clock, [ours], 0);
    gasWei = s ? gasWeiOf(s) : 0n;
  }
  await withTransaction(deps.db, async (tx) => {
    await updateRebalance(
      tx,
      row.id,
      row.phase,
      {
        message,
        message_nonce: nonce.toLowerCase() as Hex,
        ...(txHash ? { mint_tx: txHash.toLowerCase() as Hex } : {}),
      },
      deps.clock.now(),
    );
  });
  const fresh = await reload(deps, row.id);
  await bookMint(deps, fresh, txHash, fee, gasWei);
}

async function bookMint(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  txHash: Hex | null,
  fee: bigint,
  gasWei: bigint,
): Promise<void> {
  const leg = legOf(deps, row);
  const minted = row.amount - fee;
  const report: RebalanceReport = {
    ...row.report,
    fee: fee.toString(),
    minted: minted.toString(),
    gas_wei: { ...row.report.gas_wei, ...(gasWei > 0n ? { [row.to_chain_id]: gasWei.toString() } : {}) },
  };
  await moveOn(
    deps,
    row,
    row.phase,
    {
      status: 'filled',
      phase: 'minted',
      report,
      ...(txHash ? { mint_tx: txHash.toLowerCase() as Hex } : {}),
    },
    {
      part: 'mint',
      kind: 'bridge.mint',
      entries: mintEntries(leg, row.amount, fee, gasWei),
      memo: txHash ? { tx: txHash } : {},
      ...(txHash ? { claim: { chainId: row.to_chain_id, txHash, blockNumber: null } } : {}),
    },
    {
      kind: 'rebalance.minted',
      payload: { minted: minted.toString(), fee: fee.toString(), mint_tx: txHash },
    },
  );
  deps.log.info({ rebalance: row.id, mint: txHash, minted: minted.toString() }, 'rebalance minted');
}

/** Enqueues the mint job of a rebalance, due after `afterMs`. */
export async function enqueueMintCheck(
  db: DbExecutor,
  deps: Pick<RebalanceRunDeps, 'clock'>,
  id: string,
  afterMs: number,
): Promise<void> {
  const runAt = new Date(deps.clock.now().getTime() + afterMs);
  await enqueueJob(db, deps.clock, {
    name: MINT_JOB,
    payload: { rebalance_id: id },
    runAt,
    singletonKey: `${id}:mint:${runAt.getTime()}`,
  });
}

/**
 * One run of the mint job: settles the submitted mint (waiting up to the route's mint wait for its
 * receipt); `waiting` while it is still submitted (the job looks again), else `done`.
 */
export async function runMintCheck(deps: RebalanceRunDeps, id: string): Promise<'done' | 'waiting'> {
  await settleMint(deps, id, deps.config.cctp.mintWaitMs);
  const row = await findRebalance(deps.db, id, null);
  return row?.phase === 'mint_submitted' && row.status === 'executing' ? 'waiting' : 'done';
}

/**
 * At a start: every rebalance whose mint was submitted gets its mint job now, so a mint a killed
 * process left behind is finished at once (also one recorded before mints had jobs). Returns how
 * many it enqueued.
 */
export async function recoverSubmittedMints(deps: RebalanceRunDeps): Promise<number> {
  const rows = await openRebalances(deps.db, ['mint_submitted'], deps.clock.now(), 500);
  for (const row of rows) await enqueueMintCheck(deps.db, deps, row.id, 0);
  return rows.length;
}

/**
 * The hourly completion: every rebalance awaiting attestation is completed as the route does; and
 * whatever a crash or an exhausted job left behind moves on (burns not sent or not settled, mints
 * not settled). Returns what it did.
 */
export async function completePendingRebalances(
  deps: RebalanceRunDeps,
): Promise<{ minted: number; notReady: number; moved: number; failed: number }> {
  const out = { minted: 0, notReady: 0, moved: 0, failed: 0 };
  const now = deps.clock.now();
  const quiet = new Date(now.getTime() - 60_000);
  for (const row of await openRebalances(deps.db, ['burn_pending', 'burn_submitted'], quiet)) {
    try {
      await runBurn(deps, row.id);
      out.moved++;
    } catch (err) {
      out.failed++;
      deps.log.warn({ err, rebalance: row.id }, 'rebalance burn could not be moved on');
    }
  }
  for (const row of await openRebalances(deps.db, ['mint_submitted'], quiet)) {
    try {
      await settleMint(deps, row.id, deps.config.cctp.receiptTimeoutMs);
      out.moved++;
    } catch (err) {
      out.failed++;
      deps.log.warn({ err, rebalance: row.id }, 'rebalance mint could not be settled');
    }
  }
  for (const row of await openRebalances(deps.db, ['awaiting_attestation'], now, 500)) {
    try {
      const done = await completeRebalance(deps, row.id, null, deps.config.cctp.receiptTimeoutMs);
      if (done.state === 'not_ready') out.notReady++;
      else out.minted++;
    } catch (err) {
      out.failed++;
      deps.log.warn({ err, rebalance: row.id }, 'rebalance could not be completed');
    }
  }
  return out;
}
