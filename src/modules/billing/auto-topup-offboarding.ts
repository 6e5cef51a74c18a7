// Offboarding's part of auto-top-up: the ready arrows leave the quiver, and the payer gets what
// cancels each authorization on-chain.

import { getAddress } from 'viem';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Actor } from '../../core/http/actor.ts';
import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { deleteReadyArrows, readyArrowTokens } from './auto-topup-store.ts';
import { actorLabel, arrowAuditItem, arrowView } from './auto-topup-state.ts';

/** An arrow taken out of the quiver at offboarding: its terms, never its signature. */
export interface RemovedArrow {
  id: string;
  chainId: number;
  token: string;
  payer: string;
  payee: string;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: string;
}

/**
 * The distinct (chain, token) of the account's ready arrows, so the caller can read each token's
 * EIP-712 domain before the offboarding transaction (`arrowCancellation` needs it).
 */
export async function listReadyArrowTokens(
  db: DbExecutor,
  accountId: string,
): Promise<Array<{ chainId: number; token: string }>> {
  const rows = await readyArrowTokens(db, accountId);
  return rows.map((r) => ({ chainId: r.chain_id, token: r.token }));
}

/**
 * Offboarding, in the caller's transaction: every ready arrow leaves the quiver, its row and
 * signature deleted, each with an `auto_topup.arrow_removed` event, and one audit fact listing
 * them. Removing the service's copy does not revoke the authorization on-chain: whoever else holds
 * the signed authorization could still submit it until validBefore; `arrowCancellation` gives the
 * payer what cancels it. An arrow already being settled is left to its settlement (its
 * transfer is on its way; its signature is destroyed when it ends). A fire job that races loses:
 * it marks an arrow settling only while the arrow is still ready.
 */
export async function removeReadyArrows(
  tx: DbExecutor,
  clock: Clock,
  actor: Actor,
  accountId: string,
): Promise<RemovedArrow[]> {
  const rows = await deleteReadyArrows(tx, accountId);
  for (const arrow of rows) {
    await emitEvent(tx, clock, {
      accountId,
      kind: 'auto_topup.arrow_removed',
      subject: arrow.id,
      payload: {
        nonce: arrow.nonce,
        payer: arrow.payer,
        value_usd: formatUsd(BigInt(arrow.value)),
        valid_before: arrowView(arrow).valid_before,
        reason: 'offboarding',
      },
    });
  }
  if (rows.length > 0) {
    await recordAudit(tx, clock, {
      accountId,
      actor: actorLabel(actor),
      action: 'auto_topup.arrows_removed',
      subject: accountId,
      details: {
        reason: 'offboarding',
        arrows: rows.map(arrowAuditItem),
      },
      network: actor.network,
    });
  }
  return rows.map((a) => ({
    id: a.id,
    chainId: a.chain_id,
    token: a.token,
    payer: a.payer,
    payee: a.payee,
    value: BigInt(a.value),
    validAfter: BigInt(a.valid_after),
    validBefore: BigInt(a.valid_before),
    nonce: a.nonce,
  }));
}

/** EIP-3009 `CancelAuthorization(address authorizer, bytes32 nonce)`. */
export const CANCEL_AUTHORIZATION_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/**
 * What the payer needs to cancel a removed arrow's authorization on-chain: the EIP-712
 * CancelAuthorization typed data under the token's domain (name and version as read from the
 * token; null when it could not be read, with a note), and the token's `cancelAuthorization`
 * function to send with the resulting signature. Anyone may send it; it must be the payer who
 * signs. Without it the authorization stays usable by whoever holds it until `valid_before`.
 */
export function arrowCancellation(
  arrow: RemovedArrow,
  domain: { name: string; version: string } | null,
): Record<string, unknown> {
  const authorizer = getAddress(arrow.payer);
  const token = getAddress(arrow.token);
  return {
    nonce: arrow.nonce,
    payer: authorizer,
    payee: getAddress(arrow.payee),
    value_usd: formatUsd(arrow.value),
    valid_before: new Date(Number(arrow.validBefore) * 1000).toISOString(),
    token: { chain_id: arrow.chainId, address: token },
    typed_data: {
      domain: {
        ...(domain ? { name: domain.name, version: domain.version } : { name: null, version: null }),
        chainId: arrow.chainId,
        verifyingContract: token,
      },
      types: CANCEL_AUTHORIZATION_TYPES,
      primaryType: 'CancelAuthorization',
      message: { authorizer, nonce: arrow.nonce },
    },
    ...(domain
      ? {}
      : {
          domain_note:
            "The token's EIP-712 name and version could not be read; read name() and version() " +
            `from ${token} on chain ${arrow.chainId} and put them in the domain before signing.`,
        }),
    call: {
      to: token,
      function: 'cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
      alternative: 'cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
      args: { authorizer, nonce: arrow.nonce, signature: "the payer's signature over typed_data" },
      check: 'authorizationState(authorizer, nonce) returns true once the authorization is canceled or used',
    },
  };
}
