// Settling EIP-3009 authorizations that pay the platform treasury in USDC (top-ups, x402 fees,
// auto-top-up arrows).
//
// The order of things is what makes a crash harmless (docs/payments.md):
//   1. verify everything that can be checked without broadcasting (payee, asset, amount, window,
//      signature, nonce unused, payer's balance): a refusal writes nothing and sends nothing;
//   2. write the settlement row, carrying everything its effect needs, and commit it;
//   3. broadcast `transferWithAuthorization` from the relayer and note the tx hash;
//   4. wait for the receipt (bounded), then in one transaction apply the purpose's effect and mark
//      the row settled, destroying the signature.
// A process that dies after 2 leaves a row the reconciler finishes from chain truth: the
// authorization's state and its AuthorizationUsed log say whether and where the money moved.

import {
  getAddress,
  TransactionNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type Address,
  type Hex,
} from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { type Db, type DbExecutor, type Tx, withTransaction } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { newId } from '../../core/ids.ts';
import type { TokenRegistry } from '../registry/index.ts';
import {
  authorizationCanceledEvent,
  authorizationDigest,
  authorizationUsedEvent,
  transferWithAuthorizationCalldata,
  type TransferAuthorization,
} from './eip3009.ts';
import {
  findSettlement,
  findSettlementByNonce,
  insertSettlement,
  listStaleSettlements,
  lockOpenSettlement,
  markBroadcast,
  markFailed,
  markSettled,
  deleteUnsentSettlement,
  touchSettlement,
  type SettlementRow,
} from './store.ts';

type Json = Record<string, unknown>;

export interface PaymentsDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  chain?: ChainPort | undefined;
  tokenRegistry?: TokenRegistry | undefined;
}

/** What an authorization must pay: USDC on the payments chain to the treasury. */
export interface PaymentTerms {
  chainId: number;
  /** USDC on the payments chain (checksummed). */
  asset: Address;
  payee: Address;
  /** The token's EIP-712 domain name and version, as the token reports them. */
  domain: { name: string; version: string };
  /** x402 v1 network name of the chain (`base`, `base-sepolia`, `polygon`). */
  network: string;
  minValiditySeconds: number;
}

export interface SubmittedAuthorization {
  authorization: TransferAuthorization;
  signature: Hex;
}

/** Applies a settled payment's effect in the transaction that marks it settled; returns what a retry reads. */
export type SettlementEffect = (tx: Tx, clock: Clock, row: SettlementRow, txHash: Hex) => Promise<Json>;

/** The effect of each purpose (src/settlement-effects.ts lists them). */
export type SettlementEffects = Record<string, SettlementEffect>;

export type PaymentOutcome =
  | { state: 'settled'; row: SettlementRow }
  | { state: 'pending'; row: SettlementRow }
  | { state: 'failed'; row: SettlementRow };

const X402_NETWORKS: Record<number, string> = { 8453: 'base', 84532: 'base-sepolia', 137: 'polygon' };
const domainCache = new WeakMap<ChainPort, Map<string, { name: string; version: string }>>();

/**
 * The terms every payment to the platform must meet. Throws UNAVAILABLE when payments are not
 * configured here (no treasury, relayer, chain or USDC) or the token cannot be read.
 */
export async function paymentTerms(deps: PaymentsDeps): Promise<PaymentTerms> {
  const { chainId, treasury, relayerPrivateKey, minValiditySeconds } = deps.config.payments;
  const chain = deps.chain;
  const usdc = deps.tokenRegistry?.findToken(chainId, 'USDC');
  if (!treasury || !relayerPrivateKey || !chain || !chain.supports(chainId) || !usdc) {
    throw new AppError('UNAVAILABLE', 'Payments are not configured on this service.', {
      remediation:
        'The operator must set PURSER_TREASURY_ADDRESS, PURSER_RELAYER_PRIVATE_KEY and an RPC URL for ' +
        'PAYMENTS_CHAIN_ID. Until then, no top-up or x402 payment can be accepted.',
    });
  }
  if (chain.relayerAddress() === null) {
    throw new AppError('UNAVAILABLE', 'The payment relayer is not connected to the chain port.');
  }
  const asset = getAddress(usdc.address);
  let cache = domainCache.get(chain);
  if (!cache) domainCache.set(chain, (cache = new Map()));
  const key = `${chainId}:${asset}`;
  let domain = cache.get(key);
  if (!domain) {
    try {
      const d = await chain.tokenDomain(chainId, asset);
      domain = { name: d.name, version: d.version };
      cache.set(key, domain);
    } catch (err) {
      throw new AppError('UNAVAILABLE', `USDC on chain ${chainId} could not be read.`, { cause: err });
    }
  }
  return {
    chainId,
    asset,
    payee: getAddress(treasury),
    domain,
    network: X402_NETWORKS[chainId] ?? `eip155:${chainId}`,
    minValiditySeconds,
  };
}

function refused(reason: string, message: string): AppError {
  return new AppError('PAYMENT_INVALID', `${message} (${reason}). Nothing was broadcast or credited.`);
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * Checks an authorization against the terms and the chain without broadcasting anything.
 * Throws PAYMENT_INVALID naming the failed check (x402 reason codes); UNAVAILABLE when the chain
 * cannot be read.
 */
export async function verifyAuthorization(
  deps: PaymentsDeps,
  terms: PaymentTerms,
  submitted: SubmittedAuthorization,
  amount: { exactly: bigint } | { atLeast: bigint; atMost: bigint },
): Promise<void> {
  const a = submitted.authorization;
  if (!sameAddress(a.to, terms.payee)) {
    throw refused(
      'invalid_exact_evm_payload_recipient_mismatch',
      `The authorization pays ${a.to}, not the platform treasury ${terms.payee}`,
    );
  }
  if (
    'exactly' in amount ? a.value !== amount.exactly : a.value < amount.atLeast || a.value > amount.atMost
  ) {
    throw refused(
      'invalid_exact_evm_payload_authorization_value',
      'exactly' in amount
        ? `The authorization is for ${a.value} base units; exactly ${amount.exactly} are required`
        : `The authorization is for ${a.value} base units; between ${amount.atLeast} and ${amount.atMost} are accepted`,
    );
  }
  if (a.validBefore <= a.validAfter) {
    throw refused(
      'invalid_exact_evm_payload_authorization_valid_before',
      'validBefore is not after validAfter',
    );
  }
  const chain = deps.chain;
  if (!chain) throw new AppError('UNAVAILABLE', 'No chain is configured.');
  const digest = authorizationDigest(
    {
      name: terms.domain.name,
      version: terms.domain.version,
      chainId: terms.chainId,
      verifyingContract: terms.asset,
    },
    a,
  );
  let head: { timestamp: bigint };
  let signatureOk: boolean;
  let used: boolean;
  let balance: bigint;
  try {
    [head, signatureOk, used, balance] = await Promise.all([
      chain.latestBlock(terms.chainId),
      chain.verifyHash(terms.chainId, { signer: a.from, hash: digest, signature: submitted.signature }),
      chain.authorizationState(terms.chainId, terms.asset, a.from, a.nonce),
      chain.erc20Balance(terms.chainId, terms.asset, a.from),
    ]);
  } catch (err) {
    throw new AppError('UNAVAILABLE', `Chain ${terms.chainId} could not be read to verify the payment.`, {
      cause: err,
    });
  }
  if (a.validAfter > head.timestamp) {
    throw refused(
      'invalid_exact_evm_payload_authorization_valid_after',
      `The authorization is not valid before ${a.validAfter} (chain time is ${head.timestamp})`,
    );
  }
  if (a.validBefore <= head.timestamp + BigInt(terms.minValiditySeconds)) {
    throw refused(
      'invalid_exact_evm_payload_authorization_valid_before',
      `The authorization expires at ${a.validBefore}; it must stay valid at least ${terms.minValiditySeconds} s ` +
        `past chain time ${head.timestamp}`,
    );
  }
  if (!signatureOk) {
    throw refused(
      'invalid_exact_evm_payload_signature',
      `The signature is not ${a.from}'s over this TransferWithAuthorization (domain "${terms.domain.name}" ` +
        `version ${terms.domain.version}, chain ${terms.chainId}, token ${terms.asset})`,
    );
  }
  if (used) {
    throw refused(
      'invalid_transaction_state',
      `The nonce ${a.nonce} of ${a.from} is already used or canceled`,
    );
  }
  if (balance < a.value) {
    throw refused(
      'insufficient_funds',
      `${a.from} holds ${balance} USDC base units; the authorization moves ${a.value}`,
    );
  }
}

export interface SubmitPaymentParameters {
  accountId: string;
  purpose: string;
  terms: PaymentTerms;
  submitted: SubmittedAuthorization;
  /** Written with the row before anything is broadcast: what the effect needs. */
  request: Json;
  /**
   * Admission in the transaction that writes the row (caps): throw to refuse, and nothing is
   * written or broadcast.
   */
  admit?: (tx: Tx) => Promise<void>;
  deadline?: Deadline;
}

/** The settlement already recorded for this authorization, if any. */
export async function findExistingSettlement(
  db: DbExecutor,
  terms: PaymentTerms,
  submitted: SubmittedAuthorization,
): Promise<SettlementRow | undefined> {
  return findSettlementByNonce(
    db,
    terms.chainId,
    terms.asset.toLowerCase(),
    submitted.authorization.from.toLowerCase(),
    submitted.authorization.nonce.toLowerCase(),
  );
}

/**
 * Records, broadcasts and confirms a verified authorization (call verifyAuthorization first).
 * `settled`: the effect is applied; `pending`: the outcome is unknown (the reconciler finishes it);
 * `failed`: nothing moved. A second call for the same authorization returns the first one's state.
 * Throws what `admit` throws, and DEADLINE_EXCEEDED (nothing transmitted) when the budget runs out
 * before the broadcast.
 */
export async function submitPayment(
  deps: PaymentsDeps,
  effects: SettlementEffects,
  params: SubmitPaymentParameters,
): Promise<PaymentOutcome> {
  const chain = requireChain(deps);
  const a = params.submitted.authorization;
  if (!effects[params.purpose]) throw new Error(`no settlement effect for purpose ${params.purpose}`);
  params.deadline?.check('reading the chain head');
  const fromBlock = await chain.getBlockNumber(params.terms.chainId);
  const now = deps.clock.now();
  const { row, created } = await withTransaction(deps.db, async (tx) => {
    const existing = await findExistingSettlement(tx, params.terms, params.submitted);
    if (existing) return { row: existing, created: false };
    if (params.admit) await params.admit(tx);
    return insertSettlement(tx, {
      id: newId('pay'),
      account_id: params.accountId,
      purpose: params.purpose,
      chain_id: params.terms.chainId,
      token: params.terms.asset.toLowerCase(),
      payer: a.from.toLowerCase(),
      payee: a.to.toLowerCase(),
      value: a.value.toString(),
      valid_after: a.validAfter.toString(),
      valid_before: a.validBefore.toString(),
      nonce: a.nonce.toLowerCase(),
      signature: params.submitted.signature.toLowerCase(),
      request: params.request,
      from_block: fromBlock.toString(),
      now,
    });
  });
  if (!created) return outcomeOf(row);
  if (params.deadline?.expired()) {
    // Nothing left the service: forget the row, so the same authorization can be submitted again.
    await deleteUnsentSettlement(deps.db, row.id);
    throw params.deadline.exceeded('before broadcasting the settlement');
  }
  return broadcastAndConfirm(deps, effects, row, {
    waitMs: Math.min(
      deps.config.payments.confirmTimeoutMs,
      params.deadline ? Math.max(0, params.deadline.remainingMs() - 250) : Number.POSITIVE_INFINITY,
    ),
    ...(params.deadline ? { deadline: params.deadline } : {}),
  });
}

function requireChain(deps: PaymentsDeps): ChainPort {
  if (!deps.chain) throw new AppError('UNAVAILABLE', 'No chain is configured.');
  return deps.chain;
}

function outcomeOf(row: SettlementRow): PaymentOutcome {
  if (row.status === 'settled') return { state: 'settled', row };
  if (row.status === 'failed') return { state: 'failed', row };
  return { state: 'pending', row };
}

function submittedOf(row: SettlementRow): SubmittedAuthorization {
  if (!row.signature) throw new Error(`settlement ${row.id} has no signature left`);
  return {
    authorization: {
      from: getAddress(row.payer),
      to: getAddress(row.payee),
      value: BigInt(row.value),
      validAfter: BigInt(row.valid_after),
      validBefore: BigInt(row.valid_before),
      nonce: row.nonce as Hex,
    },
    signature: row.signature as Hex,
  };
}

/** Whether a send failed before anything reached the chain (estimation or simulation refused it). */
function refusedBeforeSend(err: unknown): boolean {
  const text = err instanceof Error ? `${err.name} ${err.message}` : String(err);
  return /EstimateGas|ContractFunctionExecution|execution reverted|reverted/i.test(text);
}

async function broadcastAndConfirm(
  deps: PaymentsDeps,
  effects: SettlementEffects,
  row: SettlementRow,
  options: { waitMs: number; deadline?: Deadline },
): Promise<PaymentOutcome> {
  const chain = requireChain(deps);
  const submitted = submittedOf(row);
  let txHash: Hex;
  try {
    txHash = await chain.sendTransaction(row.chain_id, {
      to: getAddress(row.token),
      data: transferWithAuthorizationCalldata(submitted.authorization, submitted.signature),
    });
  } catch (err) {
    if (/insufficient funds/i.test(err instanceof Error ? err.message : String(err))) {
      // The relayer cannot pay gas: nothing was sent; the row waits for the reconciler.
      deps.log.warn({ settlement: row.id }, 'the payment relayer has no gas money');
      throw new AppError(
        'UNAVAILABLE',
        'The payment relayer cannot pay gas right now; nothing was broadcast.',
        {
          remediation: 'Retry later with the same authorization; the operator must fund the relayer address.',
        },
      );
    }
    if (refusedBeforeSend(err)) {
      // The chain refused it in simulation: maybe the nonce was used meanwhile (by us or the payer).
      const used = await chain.authorizationState(
        row.chain_id,
        getAddress(row.token),
        submitted.authorization.from,
        submitted.authorization.nonce,
      );
      if (used) return reconcileSettlement(deps, effects, row);
      const reason = `the token refused the transfer: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      await markFailed(deps.db, row.id, reason.slice(0, 500), deps.clock.now());
      return outcomeOf((await findSettlement(deps.db, row.id)) ?? row);
    }
    // Unknown: it may or may not have reached the chain. The reconciler decides from chain truth.
    deps.log.warn({ err, settlement: row.id }, 'settlement broadcast outcome unknown');
    return { state: 'pending', row };
  }
  if (deps.config.payments.crashAfterBroadcast) {
    // Fault injection for the crash test (development only): die between broadcast and record.
    process.kill(process.pid, 'SIGKILL');
  }
  options.deadline?.markTransmitted(`settlement transaction ${txHash}`);
  await markBroadcast(deps.db, row.id, txHash, deps.clock.now());
  if (options.waitMs <= 0) return { state: 'pending', row: { ...row, status: 'broadcast', tx_hash: txHash } };
  try {
    const receipt = await chain.waitForReceipt(row.chain_id, txHash, { timeoutMs: options.waitMs });
    if (receipt.status === 'success') return finalizeSettled(deps, effects, row.id, txHash);
    return reconcileSettlement(deps, effects, { ...row, status: 'broadcast', tx_hash: txHash });
  } catch (err) {
    if (!(err instanceof WaitForTransactionReceiptTimeoutError)) {
      deps.log.warn({ err, settlement: row.id }, 'settlement receipt unavailable');
    }
    return { state: 'pending', row: { ...row, status: 'broadcast', tx_hash: txHash } };
  }
}

/** Applies the effect and marks the row settled, once: a settled row is returned as it is. */
async function finalizeSettled(
  deps: PaymentsDeps,
  effects: SettlementEffects,
  id: string,
  txHash: Hex,
): Promise<PaymentOutcome> {
  await withTransaction(deps.db, async (tx) => {
    const open = await lockOpenSettlement(tx, id);
    if (!open) return;
    const effect = effects[open.purpose];
    if (!effect) throw new Error(`no settlement effect for purpose ${open.purpose}`);
    const result = await effect(tx, deps.clock, open, txHash);
    await markSettled(tx, id, txHash.toLowerCase(), result, deps.clock.now());
  });
  const row = await findSettlement(deps.db, id);
  if (!row) throw new Error(`settlement ${id} vanished`);
  return outcomeOf(row);
}

/**
 * Finishes an unfinished settlement from chain truth: the authorization used → find its transfer
 * and apply the effect; canceled or expired unused → failed; still valid and unused → broadcast
 * (again). Safe to run concurrently with the request that started it: the chain admits the
 * authorization once and the row admits one final transition.
 */
export async function reconcileSettlement(
  deps: PaymentsDeps,
  effects: SettlementEffects,
  row: SettlementRow,
): Promise<PaymentOutcome> {
  if (row.status === 'settled' || row.status === 'failed') return outcomeOf(row);
  const chain = requireChain(deps);
  const token = getAddress(row.token);
  const payer = getAddress(row.payer);
  const nonce = row.nonce as Hex;
  const used = await chain.authorizationState(row.chain_id, token, payer, nonce);
  if (used) {
    // Our own broadcast's receipt says it first: a node may answer the state of a block before its
    // logs are searchable (eth_getLogs lags the head on real providers, and on anvil).
    if (row.tx_hash) {
      const receipt = await chain.getReceipt(row.chain_id, row.tx_hash as Hex);
      if (receipt?.status === 'success') return finalizeSettled(deps, effects, row.id, row.tx_hash as Hex);
    }
    const { usedLogs, canceledLogs } = await findAuthorizationLogs(
      chain,
      row.chain_id,
      token,
      payer,
      nonce,
      BigInt(row.from_block),
    );
    const usedLog = usedLogs[0];
    if (usedLog?.transactionHash) return finalizeSettled(deps, effects, row.id, usedLog.transactionHash);
    if (canceledLogs.length > 0) {
      await markFailed(deps.db, row.id, 'the payer canceled the authorization on-chain', deps.clock.now());
    } else if (deps.clock.now().getTime() - row.created_at.getTime() < LOG_LAG_GRACE_MS) {
      // Used, but its log not searchable yet: asked again on a later pass, not concluded now.
      await touchSettlement(deps.db, row.id, deps.clock.now());
      return { state: 'pending', row };
    } else {
      // Used before this row existed (from_block): not a transfer this service can attribute.
      await markFailed(
        deps.db,
        row.id,
        'the authorization was used outside this settlement',
        deps.clock.now(),
      );
    }
    return outcomeOf((await findSettlement(deps.db, row.id)) ?? row);
  }

  const head = await chain.latestBlock(row.chain_id);
  if (BigInt(row.valid_before) <= head.timestamp) {
    await markFailed(deps.db, row.id, 'the authorization expired before it was settled', deps.clock.now());
    return outcomeOf((await findSettlement(deps.db, row.id)) ?? row);
  }
  if (row.status === 'broadcast' && row.tx_hash) {
    const receipt = await chain.getReceipt(row.chain_id, row.tx_hash as Hex);
    if (receipt?.status === 'reverted') {
      await markFailed(
        deps.db,
        row.id,
        `the settlement transaction ${row.tx_hash} reverted`,
        deps.clock.now(),
      );
      return outcomeOf((await findSettlement(deps.db, row.id)) ?? row);
    }
    if (!receipt && (await transactionKnown(chain, row.chain_id, row.tx_hash as Hex))) {
      await touchSettlement(deps.db, row.id, deps.clock.now());
      return { state: 'pending', row };
    }
  }
  return broadcastAndConfirm(deps, effects, row, { waitMs: deps.config.payments.confirmTimeoutMs });
}

/**
 * How long after a settlement was recorded a used authorization without a log found is taken for
 * the log search lagging the head, not for a use outside the settlement.
 */
const LOG_LAG_GRACE_MS = 120_000;

/** Blocks per getLogs request: public RPC providers refuse wider ranges. */
const LOG_WINDOW = 5_000n;

/** The AuthorizationUsed / AuthorizationCanceled logs of one authorization, from `fromBlock` to the head. */
async function findAuthorizationLogs(
  chain: ChainPort,
  chainId: number,
  token: Address,
  authorizer: Address,
  nonce: Hex,
  fromBlock: bigint,
) {
  const client = chain.publicClient(chainId);
  const head = await chain.getBlockNumber(chainId);
  for (let start = fromBlock; start <= head; start += LOG_WINDOW) {
    const toBlock = start + LOG_WINDOW - 1n < head ? start + LOG_WINDOW - 1n : head;
    const range = { address: token, args: { authorizer, nonce }, fromBlock: start, toBlock };
    const [usedLogs, canceledLogs] = await Promise.all([
      client.getLogs({ ...range, event: authorizationUsedEvent }),
      client.getLogs({ ...range, event: authorizationCanceledEvent }),
    ]);
    if (usedLogs.length > 0 || canceledLogs.length > 0) return { usedLogs, canceledLogs };
  }
  return { usedLogs: [], canceledLogs: [] };
}

async function transactionKnown(chain: ChainPort, chainId: number, hash: Hex): Promise<boolean> {
  try {
    await chain.publicClient(chainId).getTransaction({ hash });
    return true;
  } catch (err) {
    if (err instanceof TransactionNotFoundError) return false;
    throw err;
  }
}

/** Reconciles every settlement untouched for `reconcileAfterSeconds`; returns how many reached an end. */
export async function reconcileStaleSettlements(
  deps: PaymentsDeps,
  effects: SettlementEffects,
  limit = 50,
): Promise<{ settled: number; failed: number; pending: number }> {
  const before = new Date(deps.clock.now().getTime() - deps.config.payments.reconcileAfterSeconds * 1000);
  const rows = await listStaleSettlements(deps.db, before, limit);
  const counts = { settled: 0, failed: 0, pending: 0 };
  for (const row of rows) {
    try {
      const outcome = await reconcileSettlement(deps, effects, row);
      counts[outcome.state] += 1;
    } catch (err) {
      counts.pending += 1;
      deps.log.warn({ err, settlement: row.id }, 'settlement reconciliation failed; retried later');
    }
  }
  return counts;
}
