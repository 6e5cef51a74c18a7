// Adding pre-signed authorizations ("arrows") to the account's quiver (POST
// /v1/balance/auto-topup/authorizations): each verified like a top-up, none broadcast.

import { AppError, invalidRequest } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { newId } from '../../core/ids.ts';
import { formatUsd, MAX_USD_MICRO } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import {
  findExistingSettlement,
  paymentTerms,
  verifyAuthorization,
  type PaymentsDeps,
  type SubmittedAuthorization,
} from '../payments/index.ts';
import {
  findArrowByNonce,
  insertArrows,
  lockQuiver,
  quiverCounts,
  type ArrowRow,
} from './auto-topup-store.ts';
import { enqueueFireIfDue } from './auto-topup-rule.ts';
import {
  actorLabel,
  arrowAuditItem,
  arrowView,
  MAX_ARROW_VALIDITY_SECONDS,
  QUIVER_CAP,
  readAutoTopupState,
  unixSeconds,
  type AutoTopupState,
} from './auto-topup-state.ts';
import { MIN_TOPUP_MICRO } from './topups.ts';
import { withTransaction } from '../../core/db/database.ts';

function arrowRefused(index: number, reason: string, message: string): AppError {
  return new AppError(
    'PAYMENT_INVALID',
    `arrows[${index}]: ${message} (${reason}). Nothing was added to the quiver.`,
  );
}

function sameTerms(arrow: ArrowRow, s: SubmittedAuthorization): boolean {
  const a = s.authorization;
  return (
    arrow.payee === a.to.toLowerCase() &&
    arrow.value === a.value.toString() &&
    arrow.valid_after === a.validAfter.toString() &&
    arrow.valid_before === a.validBefore.toString()
  );
}

export interface AddArrowsResult {
  /** Arrows new to the quiver (the others were in it already). */
  added: number;
  state: AutoTopupState;
}

/**
 * Adds pre-signed authorizations to the account's quiver. Each is verified like a top-up (payee,
 * asset, at least MIN_TOPUP_MICRO, window, signature, nonce unused on-chain, the payer's USDC) but
 * NOT broadcast. All or nothing: the first refused arrow refuses the call. An authorization
 * already in this account's quiver with the same terms is accepted again without a second copy.
 * Throws INVALID_REQUEST (the same authorization twice in one call), PAYMENT_INVALID (a refused
 * arrow, naming its index, or one submitted before elsewhere), LIMIT_EXCEEDED (more than
 * QUIVER_CAP ready arrows), UNAVAILABLE (payments not configured, chain unreadable),
 * DEADLINE_EXCEEDED (nothing stored).
 */
export async function addArrows(
  deps: PaymentsDeps,
  actor: Actor,
  arrows: SubmittedAuthorization[],
  deadline?: Deadline,
): Promise<AddArrowsResult> {
  const accountId = actor.principal.accountId;
  const seen = new Map<string, number>();
  arrows.forEach((s, i) => {
    const key = `${s.authorization.from.toLowerCase()}:${s.authorization.nonce.toLowerCase()}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw invalidRequest(
        `arrows[${i}] repeats the authorization of arrows[${first}] (same payer and nonce).`,
      );
    }
    seen.set(key, i);
  });

  const terms = await paymentTerms(deps);
  const token = terms.asset.toLowerCase();
  const latest = unixSeconds(deps.clock.now()) + BigInt(MAX_ARROW_VALIDITY_SECONDS);
  const fresh: SubmittedAuthorization[] = [];
  for (const [i, s] of arrows.entries()) {
    const a = s.authorization;
    const existing = await findArrowByNonce(deps.db, terms.chainId, token, a.from.toLowerCase(), a.nonce);
    if (existing) {
      if (existing.account_id === accountId && sameTerms(existing, s)) continue;
      throw arrowRefused(
        i,
        'invalid_transaction_state',
        `The nonce ${a.nonce} of ${a.from} was already submitted as another arrow`,
      );
    }
    if (await findExistingSettlement(deps.db, terms, s)) {
      throw arrowRefused(
        i,
        'invalid_transaction_state',
        `The nonce ${a.nonce} of ${a.from} was already submitted for a payment`,
      );
    }
    if (a.validBefore > latest) {
      throw arrowRefused(
        i,
        'invalid_exact_evm_payload_authorization_valid_before',
        `validBefore ${a.validBefore} is more than ${MAX_ARROW_VALIDITY_SECONDS / 86_400} days away; ` +
          'an arrow must expire within that',
      );
    }
    deadline?.check('verifying an arrow on-chain');
    try {
      await verifyAuthorization(deps, terms, s, { atLeast: MIN_TOPUP_MICRO, atMost: MAX_USD_MICRO });
    } catch (err) {
      if (err instanceof AppError && err.code === 'PAYMENT_INVALID') {
        throw new AppError(
          'PAYMENT_INVALID',
          `arrows[${i}]: ${err.message.replace(/Nothing was broadcast or credited\.$/, 'Nothing was added to the quiver.')}`,
        );
      }
      throw err;
    }
    fresh.push(s);
  }
  deadline?.check('storing the arrows');

  return withTransaction(deps.db, async (tx) => {
    await lockQuiver(tx, accountId);
    const counts = await quiverCounts(tx, accountId);
    if (counts.ready + fresh.length > QUIVER_CAP) {
      throw new AppError(
        'LIMIT_EXCEEDED',
        `The quiver holds at most ${QUIVER_CAP} ready arrows; it has ${counts.ready} and this call adds ` +
          `${fresh.length}. Nothing was added.`,
        {
          remediation: `Add at most ${Math.max(0, QUIVER_CAP - counts.ready)} arrows, or wait for some to be used or expire.`,
        },
      );
    }
    const now = deps.clock.now();
    const inserted = await insertArrows(
      tx,
      fresh.map((s) => ({
        id: newId('arw'),
        account_id: accountId,
        chain_id: terms.chainId,
        token,
        payer: s.authorization.from.toLowerCase(),
        payee: s.authorization.to.toLowerCase(),
        value: s.authorization.value,
        valid_after: s.authorization.validAfter,
        valid_before: s.authorization.validBefore,
        nonce: s.authorization.nonce.toLowerCase(),
        signature: s.signature.toLowerCase(),
      })),
      now,
    );
    if (inserted.length !== fresh.length) {
      // A concurrent call stored some of them first: fine when it was this account, with these terms.
      for (const [i, s] of fresh.entries()) {
        const a = s.authorization;
        const row = await findArrowByNonce(tx, terms.chainId, token, a.from.toLowerCase(), a.nonce);
        if (!row || row.account_id !== accountId || !sameTerms(row, s)) {
          throw arrowRefused(
            i,
            'invalid_transaction_state',
            `The nonce ${a.nonce} of ${a.from} was just submitted as another arrow`,
          );
        }
      }
    }
    for (const arrow of inserted) {
      await emitEvent(tx, deps.clock, {
        accountId,
        kind: 'auto_topup.arrow_added',
        subject: arrow.id,
        payload: {
          nonce: arrow.nonce,
          payer: arrow.payer,
          value_usd: formatUsd(BigInt(arrow.value)),
          valid_before: arrowView(arrow).valid_before,
        },
      });
    }
    if (inserted.length > 0) {
      await recordAudit(tx, deps.clock, {
        accountId,
        actor: actorLabel(actor),
        action: 'auto_topup.arrows_added',
        subject: accountId,
        details: {
          arrows: inserted.map(arrowAuditItem),
        },
        network: actor.network,
      });
      await enqueueFireIfDue(tx, deps.clock, accountId);
    }
    return { added: inserted.length, state: await readAutoTopupState(tx, deps.clock, accountId) };
  });
}
