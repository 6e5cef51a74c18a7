// Wrapping a Safe funder's USDC.e into pUSD (docs/prediction-markets.md, "Wrapping collateral"):
// approve the onramp and wrap, each a Safe transaction signed by the credential's sealed signer
// key and relayed by the platform relayer, which pays the gas. The budget is checked before each
// broadcast, never after: an approve without its wrap is safe to retry (the next wrap skips it).
// The wrap is booked as one ledger group on the funder's wallet.

import { erc20Abi, getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import {
  buildSafeTx,
  ecdsaSafeSignature,
  encodeExecTransaction,
  packSafeSignatures,
  SAFE_ABI,
  safeTxTypedData,
} from '../../adapters/safe/safe-tx.ts';
import type { PmContracts } from '../../config.ts';
import { withTransaction, type Db } from '../../core/db/database.ts';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { claimChainTransaction } from '../chainwatch/index.ts';
import { erc20Asset, externalAccount, postGroup, transfer, walletAccount } from '../ledger/index.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import { noActiveCredential, type CredentialDeps } from './credentials.ts';
import { wrapCalls } from './onboarding.ts';
import { getCredentialMeta } from './store.ts';
import { useCredential } from './usage.ts';

export interface WrapDeps extends CredentialDeps {
  db: Db;
  chain: ChainPort;
  chainId: number;
  contracts: PmContracts;
}

export interface WrapResult {
  wrapped_base_units: string;
  txs: Hex[];
  collateral: { pusd: string; usdce_unwrapped: string };
}

function notWrappable(message: string, remediation: string): AppError {
  return new AppError('NOT_APPLICABLE', message, {
    remediation,
    next: [
      { method: 'GET', path: '/v1/pm/credentials', why: 'the credentials, their flows and signature types' },
    ],
  });
}

/** One wrap per funder at a time in this process (both would sign the same Safe nonce). */
const running = new Map<string, Promise<unknown>>();

export async function wrapCollateral(
  deps: WrapDeps,
  actor: Actor,
  request: { credential_id: string; amount_base_units?: string | undefined },
  deadline: Deadline,
): Promise<WrapResult> {
  const accountId = actor.principal.accountId;
  const meta = await getCredentialMeta(deps.db, accountId, request.credential_id);
  if (!meta || meta.revoked_at !== null) throw noActiveCredential(request.credential_id);
  const shown = (meta.meta ?? {}) as { signature_type?: number };
  if (meta.venue !== 'polymarket' || shown.signature_type !== 2 || !meta.funder) {
    throw notWrappable(
      `Only a polymarket credential of signature type 2 (a Safe funder) wraps here; this one is ${meta.venue}` +
        `${meta.venue === 'polymarket' ? ` of signature type ${String(shown.signature_type)}` : ''}.`,
      'Wrap from the wallet itself with the wrap_calls of GET /v1/pm/onboarding/{address}.',
    );
  }
  if (meta.flow !== 'hosted') {
    throw notWrappable(
      'This credential is client-signed: Purser holds no signer key to sign the Safe transactions with.',
      'Execute the wrap_calls of GET /v1/pm/onboarding/{address} from the Safe yourself.',
    );
  }
  const funder = getAddress(meta.funder);
  await assertExecutionEnabled(deps.db, { accountId, wallet: funder });
  if (!deps.keyring.confidential) {
    throw unavailable('Sealing is not configured here, so no stored signer key can be opened.', {
      remediation: 'The operator sets PURSER_SEALING_KEYS.',
      next: [],
    });
  }
  if (!deps.chain.relayerAddress()) {
    throw unavailable('No relay signer is configured here to submit the Safe transactions.', {
      remediation: 'The operator sets PURSER_RELAYER_PRIVATE_KEY (a funded key on the chain); retry later.',
      next: [],
    });
  }
  const previous = running.get(funder) ?? Promise.resolve();
  const mine = previous.catch(() => undefined).then(() => wrapLocked(deps, actor, request, funder, deadline));
  running.set(funder, mine);
  try {
    return await mine;
  } finally {
    if (running.get(funder) === mine) running.delete(funder);
  }
}

async function wrapLocked(
  deps: WrapDeps,
  actor: Actor,
  request: { credential_id: string; amount_base_units?: string | undefined },
  funder: Address,
  deadline: Deadline,
): Promise<WrapResult> {
  const accountId = actor.principal.accountId;
  const { chain, chainId, contracts } = deps;
  const client = chain.publicClient(chainId);
  deadline.check('reading the Safe and its USDC.e');
  let owners: readonly Address[];
  let threshold: bigint;
  let nonce: bigint;
  let balance: bigint;
  let allowance: bigint;
  try {
    [owners, threshold, nonce, balance, allowance] = await Promise.all([
      client.readContract({ address: funder, abi: SAFE_ABI, functionName: 'getOwners' }),
      client.readContract({ address: funder, abi: SAFE_ABI, functionName: 'getThreshold' }),
      client.readContract({ address: funder, abi: SAFE_ABI, functionName: 'nonce' }),
      client.readContract({
        address: contracts.usdce,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [funder],
      }),
      client.readContract({
        address: contracts.usdce,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [funder, contracts.onramp],
      }),
    ]);
  } catch (err) {
    throw unavailable(`The chain ${chainId} RPC did not answer: ${(err as Error).message.split('\n')[0]}`, {
      remediation: 'Retry in a few seconds; nothing was sent.',
      next: [],
    });
  }
  if (balance === 0n) {
    throw notWrappable(`The Safe ${funder} holds no USDC.e to wrap.`, 'Send USDC.e to the Safe first.');
  }
  const amount = request.amount_base_units === undefined ? balance : BigInt(request.amount_base_units);
  if (amount === 0n) throw invalidRequest('amount_base_units: must be more than 0.');
  if (amount > balance) {
    throw invalidRequest(`amount_base_units: more than the Safe's unwrapped USDC.e (${balance} base units).`);
  }
  if (threshold !== 1n) {
    throw notWrappable(
      `The Safe ${funder} needs ${threshold} owners' signatures; Purser holds one signer key.`,
      "Execute the wrap_calls of GET /v1/pm/onboarding/{address} with the Safe's owners.",
    );
  }

  // The use is recorded (audit, watch) before anything is signed; the key is opened here only.
  const used = await withTransaction(deps.db, (tx) =>
    useCredential(tx, deps, { accountId, credentialId: request.credential_id, operation: 'wrap', actor }),
  );
  if (!used) throw noActiveCredential(request.credential_id);
  if (used.material.venue !== 'polymarket' || !used.material.signer_key) {
    throw notWrappable('This credential holds no signer key.', 'Store the credential with its signer_key.');
  }
  const signer = privateKeyToAccount(used.material.signer_key);
  if (!owners.some((o) => getAddress(o) === signer.address)) {
    throw notWrappable(
      `The credential's signer ${signer.address} is not an owner of the Safe ${funder} now.`,
      'Store a credential of a current owner (rotation: GET /v1/pm/credentials/{id}/rotation).',
    );
  }

  const txs: Hex[] = [];
  let wrapBlock: bigint | null = null;
  const calls = wrapCalls(contracts, funder, amount, allowance);
  for (const [i, call] of calls.entries()) {
    const safeTx = buildSafeTx({ to: call.to, data: call.data, nonce: nonce + BigInt(i) });
    const signature = await signer.signTypedData(safeTxTypedData(chainId, funder, safeTx));
    const data = encodeExecTransaction(
      safeTx,
      packSafeSignatures([ecdsaSafeSignature(signer.address, signature)]),
    );
    deadline.check(call.id === 'wrap_usdce' ? 'broadcasting the wrap' : 'broadcasting the approve');
    let hash: Hex;
    try {
      hash = await chain.sendTransaction(chainId, { to: funder, data });
    } catch (err) {
      throw failed(call.id, txs, (err as Error).message.split('\n')[0] ?? 'refused');
    }
    deadline.markTransmitted(`${call.id} ${hash}`);
    txs.push(hash);
    // Waits for the receipt while the budget lasts (less a margin to answer in).
    const timeoutMs = Math.max(1_000, deadline.remainingMs() - 500);
    const receipt = await chain.waitForReceipt(chainId, hash, { timeoutMs }).catch(() => null);
    if (receipt) wrapBlock = receipt.blockNumber;
    if (!receipt) {
      throw unavailable(
        `The ${call.id === 'wrap_usdce' ? 'wrap' : 'approve'} ${hash} was sent and is not mined yet.`,
        {
          remediation:
            'Read GET /v1/pm/onboarding/{address} in a minute: pUSD shows once it is mined. Retrying is safe: a ' +
            'second wrap of the same Safe nonce cannot land.',
          next: [],
        },
      );
    }
    if (receipt.status !== 'success') throw failed(call.id, txs, `transaction ${hash} reverted`);
  }

  const wrapTx = txs[txs.length - 1]!;
  await withTransaction(deps.db, async (tx) => {
    const res = await postGroup(tx, deps.clock, {
      settlementId: `pm:wrap:${wrapTx.toLowerCase()}`,
      accountId,
      kind: 'pm.wrap',
      entries: [
        ...transfer(
          externalAccount(chainId),
          walletAccount(chainId, funder),
          erc20Asset(chainId, contracts.usdce),
          amount,
        ),
        ...transfer(
          walletAccount(chainId, funder),
          externalAccount(chainId),
          erc20Asset(chainId, contracts.collateral),
          amount,
        ),
      ],
      memo: { credential_id: request.credential_id, funder: funder.toLowerCase(), txs },
    });
    if (!res.ok) throw new Error(`the wrap ${wrapTx} could not be booked: ${res.reason}`);
    // The wrap's transfers at the funder are this group's: the chain watcher matches them.
    await claimChainTransaction(tx, deps.clock, {
      chainId,
      txHash: wrapTx,
      wallet: funder,
      groupId: res.groupId,
      blockNumber: wrapBlock,
    });
    return res;
  });

  const [pusd, usdce] = await Promise.all([
    client.readContract({
      address: contracts.collateral,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [funder],
    }),
    client.readContract({
      address: contracts.usdce,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [funder],
    }),
  ]);
  return {
    wrapped_base_units: amount.toString(),
    txs,
    collateral: { pusd: pusd.toString(), usdce_unwrapped: usdce.toString() },
  };
}

function failed(step: string, txs: Hex[], why: string): AppError {
  const landed = txs.length > 1 || (txs.length === 1 && step === 'wrap_usdce');
  return new AppError('NOT_APPLICABLE', `The ${step === 'wrap_usdce' ? 'wrap' : 'approve'} failed: ${why}.`, {
    remediation: landed
      ? 'The approve landed and the wrap did not: retrying is safe (the next wrap skips the approve).'
      : 'Nothing moved. Read GET /v1/pm/onboarding/{address} and retry.',
    next: [],
  });
}
