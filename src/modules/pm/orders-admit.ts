// Admitting a prediction-market order: every check before anything leaves, then one transaction
// that writes it. The steps, in order: the request and its credential validated; the market's
// price grid and exchange read from the venue and the V2 order built and priced; a token of the
// orders lane taken; then, in the transaction, the switches, the wallet's prediction_markets
// policy and its open exposure (under a per-wallet lock, exact under concurrency) checked, the
// order recorded with its client_order_id and Idempotency-Key claimed, its fee charged, the hosted
// credential opened (a use) and the admission audited.

import { getAddress, type Address, type Hex } from 'viem';
import { orderNotionalMicros, OrderInputError } from '../../adapters/pm-venue/order-amounts.ts';
import { buildOrderV2, orderHashV2 } from '../../adapters/pm-venue/polymarket.ts';
import {
  VenueRejected,
  VenueUnavailable,
  type ClobL2Auth,
  type ClobOrderV2,
  type ClobTickSize,
} from '../../adapters/pm-venue/port.ts';
import { type DbExecutor, lockUntilCommit, withTransaction } from '../../core/db/database.ts';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import { actorName, type Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { newId } from '../../core/ids.ts';
import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { chargeFee, pmOrderFeeMicro } from '../billing/index.ts';
import { erc20Asset, walletAccount } from '../ledger/index.ts';
import {
  evaluateRules,
  getActivePolicy,
  noPolicyError,
  usdToMicro,
  type ActivePolicy,
} from '../policies/index.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import { noActiveCredential } from './credentials.ts';
import { findKeyedOrder, insertOrder, openExposure, type PmOrderRow } from './orders-store.ts';
import type { OrderDeps, OrderKey, PlaceOrderBody } from './orders-types.ts';
import { takeOrderToken } from './orders-venue.ts';
import { getCredentialMeta, type CredentialMetaRow } from './store.ts';
import { clobCredsOf } from './types.ts';
import { useCredential } from './usage.ts';

/** Admission found an order of the account under the request's key (nothing was written). */
export class KeyedOrderExists extends Error {
  constructor(readonly row: PmOrderRow) {
    super(`order ${row.id} holds the Idempotency-Key`);
    this.name = 'KeyedOrderExists';
  }
}

/** What admission leaves for the transmit (or, client-signed, for the signature). */
export interface Admitted {
  row: PmOrderRow;
  order: ClobOrderV2;
  venueSpec: { chainId: number; negRisk: boolean };
  giveBack: () => Promise<void>;
  /** Hosted: the signer key and the L2 authentication, opened in the admission (a use). */
  hosted: { signerKey: Hex; auth: ClobL2Auth } | null;
}

/** How long a prepared order waits for its signature. */
export const PREPARE_TTL_MS = 5 * 60_000;

type OrderFlow = 'hosted' | 'client_signed';

/** The order built for the venue and what it costs, before anything is written. */
interface PricedOrder {
  order: ClobOrderV2;
  signer: Address;
  negRisk: boolean;
  notional: bigint;
  priceMicro: bigint;
  sizeMicro: bigint;
  fee: bigint;
  venueSpec: { chainId: number; negRisk: boolean };
  orderHash: Hex;
}

/**
 * Every check of an order, then, in one transaction, its exposure, client_order_id, fee and
 * record. Hosted: the record is `transmitting` and the key opened; client-signed: `prepared`.
 */
export async function admitOrder(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  flow: OrderFlow,
  key: OrderKey | null,
): Promise<Admitted> {
  const accountId = actor.principal.accountId;
  const wallet = body.wallet.toLowerCase();
  const { meta, signatureType } = await validateOrderRequest(deps, accountId, wallet, body, flow);
  const priced = await priceOrder(deps, body, meta, signatureType, deadline);
  const id = newId('pmo');
  const giveBack = await takeOrderToken(deps);

  try {
    return await withTransaction(deps.db, async (tx): Promise<Admitted> => {
      await assertSwitchesReadable(tx, { accountId, wallet });
      const policy = await checkPolicyAndExposure(tx, deps, accountId, wallet, body, priced);
      const row = orderRow(deps, { id, accountId, wallet, meta, body, flow, key, priced, policy });
      await recordOrder(tx, deps, row, body, key, priced.fee, policy);
      const hosted =
        flow === 'hosted' ? await openHostedCredential(tx, deps, actor, meta, body, priced.signer) : null;
      await recordAudit(tx, deps.clock, {
        accountId,
        actor: actorName(actor),
        action: 'pm.order.admit',
        subject: id,
        details: {
          wallet,
          order_hash: priced.orderHash,
          notional_micro: priced.notional.toString(),
          fee_micro: row.fee_micro,
        },
        network: actor.network,
      });
      return { row, order: priced.order, venueSpec: priced.venueSpec, giveBack, hosted };
    });
  } catch (err) {
    await giveBack();
    throw err;
  }
}

/**
 * Validates the request and its credential: the state's size, an active polymarket credential of
 * the account whose flow is the route's, the wallet its funder, a usable signature type.
 */
async function validateOrderRequest(
  deps: OrderDeps,
  accountId: string,
  wallet: string,
  body: PlaceOrderBody,
  flow: OrderFlow,
): Promise<{ meta: CredentialMetaRow & { funder: string }; signatureType: 0 | 1 | 2 }> {
  if (body.state !== undefined && Buffer.byteLength(JSON.stringify(body.state)) > 8192) {
    throw invalidRequest('state: at most 8 KB as JSON.');
  }
  const meta = await getCredentialMeta(deps.db, accountId, body.credential_id);
  if (!meta || meta.revoked_at !== null) throw noActiveCredential(body.credential_id);
  if (meta.venue !== 'polymarket') {
    throw invalidRequest(`credential_id: a ${meta.venue} credential cannot route polymarket orders.`);
  }
  if (flow === 'hosted' && meta.flow !== 'hosted') {
    throw invalidRequest(
      'credential_id: this credential is client-signed (no signer key is stored): use POST /v1/pm/orders/prepare and /submit.',
    );
  }
  if (flow === 'client_signed' && meta.flow !== 'client_signed') {
    throw invalidRequest(
      'credential_id: this credential is hosted (its signer key is stored): place orders with POST /v1/pm/orders.',
    );
  }
  if (!meta.funder || wallet !== meta.funder) {
    throw invalidRequest(
      `wallet: orders of this credential are made by its funder ${meta.funder ?? '(none)'}; the wallet must be that address.`,
    );
  }
  const signatureType = (meta.meta as { signature_type?: number }).signature_type;
  if (signatureType !== 0 && signatureType !== 1 && signatureType !== 2) {
    throw invalidRequest('credential_id: the credential has no usable signature type.');
  }
  return { meta: { ...meta, funder: meta.funder }, signatureType };
}

/**
 * The market's price grid and exchange, from the venue, then the V2 order on them and its
 * notional, fee and hash: nothing is written yet.
 */
async function priceOrder(
  deps: OrderDeps,
  body: PlaceOrderBody,
  meta: CredentialMetaRow & { funder: string },
  signatureType: 0 | 1 | 2,
  deadline: Deadline,
): Promise<PricedOrder> {
  deadline.check('asking the venue for the market');
  let tickSize: ClobTickSize;
  let negRisk: boolean;
  try {
    [tickSize, negRisk] = await Promise.all([
      deps.clob.tickSize(body.token_id, { timeoutMs: deadline.remainingMs() }),
      deps.clob.negRisk(body.token_id, { timeoutMs: deadline.remainingMs() }),
    ]);
  } catch (err) {
    if (err instanceof VenueRejected) {
      throw new AppError('VENUE_REJECTED', `polymarket does not know token ${body.token_id}: ${err.message}`);
    }
    if (err instanceof VenueUnavailable) {
      throw unavailable(
        `polymarket could not be asked for the market: ${err.message}. Nothing was transmitted.`,
        {
          remediation: 'Retry in a few seconds.',
          next: [],
        },
      );
    }
    throw err;
  }
  const signer = getAddress(meta.signer_address!);
  let order: ClobOrderV2;
  try {
    order = buildOrderV2({
      maker: getAddress(meta.funder),
      signer,
      signatureType,
      tokenId: body.token_id,
      side: body.action === 'buy' ? 'BUY' : 'SELL',
      price: body.price_usd,
      size: body.size_shares,
      tickSize,
      clock: deps.clock,
    });
  } catch (err) {
    if (err instanceof OrderInputError) {
      const field = err.field === 'price' ? 'price_usd' : err.field === 'size' ? 'size_shares' : err.field;
      throw invalidRequest(`${field}: ${err.message}.`);
    }
    throw err;
  }
  const notional = orderNotionalMicros(order);
  const venueSpec = { chainId: deps.config.pm.chainId, negRisk };
  return {
    order,
    signer,
    negRisk,
    notional,
    priceMicro: usdToMicro(body.price_usd),
    sizeMicro: usdToMicro(body.size_shares),
    fee: pmOrderFeeMicro(deps.config, notional),
    venueSpec,
    orderHash: orderHashV2(order, venueSpec).toLowerCase() as Hex,
  };
}

/**
 * The wallet's policy: its prediction-market rules, then the exposure floor under the wallet's
 * lock (open orders at their limit notional) against max_exposure_usd and max_market_exposure_usd.
 */
async function checkPolicyAndExposure(
  tx: DbExecutor,
  deps: OrderDeps,
  accountId: string,
  wallet: string,
  body: PlaceOrderBody,
  priced: PricedOrder,
): Promise<ActivePolicy> {
  const { notional } = priced;
  const policy = await getActivePolicy(tx, deps.registry, accountId, wallet);
  if (!policy) throw noPolicyError(wallet);
  const failed = evaluateRules(policy.document, {
    kind: 'prediction_market_order',
    venue: 'polymarket',
    amountMicroUsd: notional,
    market: body.condition_id,
    priceMicro: priced.priceMicro,
  }).find((v) => !v.pass);
  if (failed) {
    const show = (x: unknown) => (Array.isArray(x) ? `[${x.join(', ')}]` : String(x));
    throw refused(
      failed.rule,
      `Refused by ${failed.rule}: the limit is ${show(failed.limit)}, the order would use ${show(failed.value)}.`,
    );
  }
  // The exposure floor, under the wallet's lock: open orders at their limit notional.
  await lockUntilCommit(tx, `pm-exposure:${accountId}:${wallet}`);
  const pm = policy.document.prediction_markets;
  const open = await openExposure(tx, accountId, wallet, body.condition_id.toLowerCase(), {
    walletAccount: walletAccount(deps.config.pm.chainId, wallet),
    collateralAsset: erc20Asset(deps.config.pm.chainId, deps.config.pm.contracts.collateral),
  });
  const cap = usdToMicro(pm.max_exposure_usd);
  if (open.totalMicro + notional > cap) {
    throw refused(
      'prediction_markets.max_exposure_usd',
      `Refused by prediction_markets.max_exposure_usd: the limit is ${pm.max_exposure_usd} USD, open exposure ` +
        `${formatUsd(open.totalMicro)} USD plus this order's ${formatUsd(notional)} USD would exceed it.`,
    );
  }
  const marketCap = usdToMicro(pm.max_market_exposure_usd);
  if (marketCap > 0n && open.marketMicro + notional > marketCap) {
    throw refused(
      'prediction_markets.max_market_exposure_usd',
      `Refused by prediction_markets.max_market_exposure_usd: the limit is ${pm.max_market_exposure_usd} USD ` +
        `per market, open exposure in ${body.condition_id} is ${formatUsd(open.marketMicro)} USD, and this ` +
        `order adds ${formatUsd(notional)} USD.`,
    );
  }
  return policy;
}

/** 403 POLICY_VIOLATION naming the rule: prediction-market refusals (decisions.md). */
function refused(rule: string, message: string): AppError {
  return new AppError('POLICY_VIOLATION', message, {
    status: 403,
    remediation: `Change the order to fit ${rule}, or publish a new policy version with PUT /v1/policies.`,
    next: [{ method: 'POST', path: '/v1/checks', why: 'dry-run an order against the policy' }],
  });
}

/** The order's record as admission writes it: hosted `transmitting`, client-signed `prepared`. */
function orderRow(
  deps: OrderDeps,
  a: {
    id: string;
    accountId: string;
    wallet: string;
    meta: CredentialMetaRow;
    body: PlaceOrderBody;
    flow: OrderFlow;
    key: OrderKey | null;
    priced: PricedOrder;
    policy: ActivePolicy;
  },
): PmOrderRow {
  const { body, flow, key, priced } = a;
  const now = deps.clock.now();
  return {
    id: a.id,
    account_id: a.accountId,
    wallet: a.wallet,
    credential_id: a.meta.id,
    venue: 'polymarket',
    client_order_id: body.client_order_id ?? null,
    condition_id: body.condition_id.toLowerCase(),
    token_id: priced.order.tokenId,
    side: body.action,
    price_micro: priced.priceMicro.toString(),
    size_micro: priced.sizeMicro.toString(),
    notional_micro: priced.notional.toString(),
    fee_micro: '0',
    filled_micro: '0',
    fee_group_id: null,
    flow,
    status: flow === 'hosted' ? 'transmitting' : 'prepared',
    order_hash: priced.orderHash,
    order_struct: { order: priced.order, neg_risk: priced.negRisk },
    state: body.state ?? {},
    venue_status: null,
    venue_error: null,
    policy_version: a.policy.version,
    policy_hash: a.policy.hash,
    expires_at: flow === 'hosted' ? null : new Date(now.getTime() + PREPARE_TTL_MS),
    created_at: now,
    updated_at: now,
    idempotency_key: key?.key ?? null,
    request_fingerprint: key?.fingerprint ?? null,
    submit_key: null,
    submit_fingerprint: null,
    unanswered_at: null,
  };
}

/**
 * Writes the order, claiming its client_order_id and Idempotency-Key (KeyedOrderExists when a
 * concurrent request with the key committed first), then charges its fee onto the record.
 */
async function recordOrder(
  tx: DbExecutor,
  deps: OrderDeps,
  row: PmOrderRow,
  body: PlaceOrderBody,
  key: OrderKey | null,
  fee: bigint,
  policy: ActivePolicy,
): Promise<void> {
  if (!(await insertOrder(tx, row))) {
    // The key first: a concurrent request with it committed its order while this one waited.
    const keyed = key ? await findKeyedOrder(tx, row.account_id, key.key) : null;
    if (keyed) throw new KeyedOrderExists(keyed);
    throw new AppError(
      'CONFLICT',
      `An order with client_order_id "${body.client_order_id}" was already attempted by this account; nothing was transmitted.`,
      { remediation: 'Use a new client_order_id for a new order; list orders with GET /v1/pm/orders.' },
    );
  }
  const charged = await chargeFee(tx, deps, {
    accountId: row.account_id,
    product: 'pm_order',
    feeMicroUsd: fee,
    settlementId: `fee:pm_order:${row.id}`,
    wallet: row.wallet,
    policyHash: `sha256:${policy.hash}`,
  });
  if (charged.charged) {
    await tx
      .updateTable('pm_orders')
      .set({ fee_micro: fee.toString(), fee_group_id: charged.groupId })
      .where('id', '=', row.id)
      .execute();
    row.fee_micro = fee.toString();
    row.fee_group_id = charged.groupId;
  }
}

/** Hosted: opens the stored credential for the order (a use): its signer key and L2 authentication. */
async function openHostedCredential(
  tx: DbExecutor,
  deps: OrderDeps,
  actor: Actor,
  meta: CredentialMetaRow,
  body: PlaceOrderBody,
  signer: Address,
): Promise<NonNullable<Admitted['hosted']>> {
  const used = await useCredential(tx, deps, {
    accountId: actor.principal.accountId,
    credentialId: meta.id,
    operation: 'order.place',
    actor,
  });
  if (!used || used.material.venue !== 'polymarket' || !used.material.signer_key) {
    throw noActiveCredential(body.credential_id);
  }
  return {
    signerKey: used.material.signer_key,
    auth: {
      address: signer,
      creds: clobCredsOf(used.material),
    },
  };
}

/** A switch that cannot be read is 503, never a silent pass (the spec's "kill switch unreadable"). */
async function assertSwitchesReadable(
  tx: DbExecutor,
  target: { accountId: string; wallet: string },
): Promise<void> {
  try {
    await assertExecutionEnabled(tx, { ...target, venue: 'polymarket' }, { fresh: true });
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw unavailable('The execution switches could not be read; nothing was transmitted.', {
      remediation: 'Retry in a few seconds.',
      next: [],
    });
  }
}
