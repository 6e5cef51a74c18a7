// Prediction-market orders (docs/prediction-markets.md, "Orders"), hosted flow: every check before
// anything leaves. The order is checked against the wallet's prediction_markets policy and its open
// exposure (under a per-wallet lock, exact under concurrency), its client_order_id claimed, its fee
// debited and the order recorded, in one transaction; only then is it signed and transmitted, the
// budget checked before the transmit and never after. A refusal by the venue releases the exposure
// and reverses the fee; an answer that never came leaves the order `transmitting` until the venue
// is asked about its hash: an order is never sent twice.
//
// Idempotency-Key: an order reaches the venue, so its key cannot live in a transaction around the
// request. It is recorded on the order (claimed by a unique index in the admission's transaction,
// so of concurrent requests with one key exactly one is admitted, transmitted and charged), and a
// retry with the key is answered from the order as it is now: placed (201, the first answer),
// refused (422, as the first), still in flight (409), or, when the first request got no answer
// from the venue, after asking the venue about the order's hash (201 once it shows, 503 while it
// does not). The same key with another request is IDEMPOTENCY_CONFLICT (422).

import { getAddress, recoverTypedDataAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { orderNotionalMicros, OrderInputError } from '../../adapters/pm-venue/order-amounts.ts';
import {
  buildOrderV2,
  orderHashV2,
  orderTypedDataV2,
  signOrderV2,
} from '../../adapters/pm-venue/polymarket.ts';
import {
  VenueRejected,
  VenueUnavailable,
  type ClobL2Auth,
  type ClobOrderV2,
  type ClobSignedOrderV2,
  type ClobTickSize,
  type ClobTrade,
  type PolymarketClobPort,
} from '../../adapters/pm-venue/port.ts';
import type { Config } from '../../config.ts';
import { type Db, type DbExecutor, lockUntilCommit, withTransaction } from '../../core/db/database.ts';
import { AppError, invalidRequest, notFound, unavailable } from '../../core/errors/app-error.ts';
import { actorName, type Actor } from '../../core/http/actor.ts';
import { inFlight, keyReusedError } from '../../core/http/idempotency.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { newId } from '../../core/ids.ts';
import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { chargeFee, pmOrderFeeMicro } from '../billing/index.ts';
import { emitEvent } from '../events/index.ts';
import { erc20Asset, reverseGroup, walletAccount } from '../ledger/index.ts';
import { evaluateRules, getActivePolicy, noPolicyError, usdToMicro } from '../policies/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { returnTokens, takeTokens, rateLaneName } from '../ratelanes/index.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import { noActiveCredential, type CredentialDeps } from './credentials.ts';
import {
  findKeyedOrder,
  insertOrder,
  openExposure,
  transmittingBefore,
  updateOrder,
  type PmOrderRow,
} from './orders-store.ts';
import { getCredentialMeta } from './store.ts';
import { clobCredsOf } from './types.ts';
import { useCredential } from './usage.ts';

export interface OrderDeps extends CredentialDeps {
  config: Config;
  db: Db;
  registry: TokenRegistry;
  clob: PolymarketClobPort;
}

export interface PlaceOrderBody {
  venue?: 'polymarket' | undefined;
  wallet: string;
  credential_id: string;
  condition_id: string;
  token_id: string;
  action: 'buy' | 'sell';
  price_usd: string;
  size_shares: string;
  client_order_id?: string | undefined;
  state?: object | undefined;
}

export interface PlacedOrder {
  venue: 'polymarket';
  order_id: string;
  status: string;
  cost_usd: string;
  fee_usd: string;
  policy_version: number;
}

/** A request's Idempotency-Key, with the fingerprint of the request (method, path, query, body). */
export interface OrderKey {
  key: string;
  fingerprint: string;
}

/** An order route's answer: the first outcome, or a replay of it under the same key. */
export interface KeyedAnswer<T> {
  body: T;
  replayed: boolean;
}

/** Admission found an order of the account under the request's key (nothing was written). */
class KeyedOrderExists extends Error {
  constructor(readonly row: PmOrderRow) {
    super(`order ${row.id} holds the Idempotency-Key`);
    this.name = 'KeyedOrderExists';
  }
}

/** 403 POLICY_VIOLATION naming the rule: prediction-market refusals (decisions.md). */
function refused(rule: string, message: string): AppError {
  return new AppError('POLICY_VIOLATION', message, {
    status: 403,
    remediation: `Change the order to fit ${rule}, or publish a new policy version with PUT /v1/policies.`,
    next: [{ method: 'POST', path: '/v1/checks', why: 'dry-run an order against the policy' }],
  });
}

/** The orders lane of the venue: 429 with Retry-After when the platform's order cap is spent. */
async function takeOrderToken(deps: OrderDeps): Promise<() => Promise<void>> {
  const lane = rateLaneName('polymarket', 'orders');
  const config = deps.config.pm.rateLanes.orders;
  const taken = await takeTokens(deps.db, deps.clock, lane, config);
  if (!taken.ok) {
    const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
    throw new AppError(
      'RATE_LIMITED',
      `The platform's order cap for polymarket is spent for now: nothing was transmitted.`,
      {
        remediation: `Retry after ${seconds} s (Retry-After). Cancels are never subject to it.`,
        headers: { 'retry-after': String(seconds) },
      },
    );
  }
  return async () => {
    await returnTokens(deps.db, deps.clock, lane, config);
  };
}

/** What admission leaves for the transmit (or, client-signed, for the signature). */
interface Admitted {
  row: PmOrderRow;
  order: ClobOrderV2;
  venueSpec: { chainId: number; negRisk: boolean };
  giveBack: () => Promise<void>;
  /** Hosted: the signer key and the L2 authentication, opened in the admission (a use). */
  hosted: { signerKey: Hex; auth: ClobL2Auth } | null;
}

/** How long a prepared order waits for its signature. */
export const PREPARE_TTL_MS = 5 * 60_000;

/**
 * Every check of an order, then, in one transaction, its exposure, client_order_id, fee and
 * record. Hosted: the record is `transmitting` and the key opened; client-signed: `prepared`.
 */
async function admitOrder(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  flow: 'hosted' | 'client_signed',
  key: OrderKey | null,
): Promise<Admitted> {
  const accountId = actor.principal.accountId;
  const wallet = body.wallet.toLowerCase();
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

  // The market's price grid and exchange, from the venue, before anything is written.
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
  const priceMicro = usdToMicro(body.price_usd);
  const sizeMicro = usdToMicro(body.size_shares);
  const fee = pmOrderFeeMicro(deps.config, notional);
  const venueSpec = { chainId: deps.config.pm.chainId, negRisk };
  const orderHash = orderHashV2(order, venueSpec).toLowerCase() as Hex;
  const id = newId('pmo');
  const giveBack = await takeOrderToken(deps);

  try {
    return await withTransaction(deps.db, async (tx): Promise<Admitted> => {
      await assertSwitchesReadable(tx, { accountId, wallet });
      const policy = await getActivePolicy(tx, deps.registry, accountId, wallet);
      if (!policy) throw noPolicyError(wallet);
      const failed = evaluateRules(policy.document, {
        kind: 'prediction_market_order',
        venue: 'polymarket',
        amountMicroUsd: notional,
        market: body.condition_id,
        priceMicro,
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
      const now = deps.clock.now();
      const row: PmOrderRow = {
        id,
        account_id: accountId,
        wallet,
        credential_id: meta.id,
        venue: 'polymarket',
        client_order_id: body.client_order_id ?? null,
        condition_id: body.condition_id.toLowerCase(),
        token_id: order.tokenId,
        side: body.action,
        price_micro: priceMicro.toString(),
        size_micro: sizeMicro.toString(),
        notional_micro: notional.toString(),
        fee_micro: '0',
        filled_micro: '0',
        fee_group_id: null,
        flow,
        status: flow === 'hosted' ? 'transmitting' : 'prepared',
        order_hash: orderHash,
        order_struct: { order, neg_risk: negRisk },
        state: body.state ?? {},
        venue_status: null,
        venue_error: null,
        policy_version: policy.version,
        policy_hash: policy.hash,
        expires_at: flow === 'hosted' ? null : new Date(now.getTime() + PREPARE_TTL_MS),
        created_at: now,
        updated_at: now,
        idempotency_key: key?.key ?? null,
        request_fingerprint: key?.fingerprint ?? null,
        submit_key: null,
        submit_fingerprint: null,
        unanswered_at: null,
      };
      if (!(await insertOrder(tx, row))) {
        // The key first: a concurrent request with it committed its order while this one waited.
        const keyed = key ? await findKeyedOrder(tx, accountId, key.key) : null;
        if (keyed) throw new KeyedOrderExists(keyed);
        throw new AppError(
          'CONFLICT',
          `An order with client_order_id "${body.client_order_id}" was already attempted by this account; nothing was transmitted.`,
          { remediation: 'Use a new client_order_id for a new order; list orders with GET /v1/pm/orders.' },
        );
      }
      const charged = await chargeFee(tx, deps, {
        accountId,
        product: 'pm_order',
        feeMicroUsd: fee,
        settlementId: `fee:pm_order:${id}`,
        wallet,
        policyHash: `sha256:${policy.hash}`,
      });
      if (charged.charged) {
        await tx
          .updateTable('pm_orders')
          .set({ fee_micro: fee.toString(), fee_group_id: charged.groupId })
          .where('id', '=', id)
          .execute();
        row.fee_micro = fee.toString();
        row.fee_group_id = charged.groupId;
      }
      let hosted: Admitted['hosted'] = null;
      if (flow === 'hosted') {
        const used = await useCredential(tx, deps, {
          accountId,
          credentialId: meta.id,
          operation: 'order.place',
          actor,
        });
        if (!used || used.material.venue !== 'polymarket' || !used.material.signer_key) {
          throw noActiveCredential(body.credential_id);
        }
        hosted = {
          signerKey: used.material.signer_key,
          auth: {
            address: signer,
            creds: clobCredsOf(used.material),
          },
        };
      }
      await recordAudit(tx, deps.clock, {
        accountId,
        actor: actorName(actor),
        action: 'pm.order.admit',
        subject: id,
        details: {
          wallet,
          order_hash: orderHash,
          notional_micro: notional.toString(),
          fee_micro: row.fee_micro,
        },
        network: actor.network,
      });
      return { row, order, venueSpec, giveBack, hosted };
    });
  } catch (err) {
    await giveBack();
    throw err;
  }
}

/** Places a limit order with a stored hosted credential. */
export async function placeOrder(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null = null,
): Promise<PlacedOrder> {
  const admitted = await admitOrder(deps, actor, body, deadline, 'hosted', key);
  const { signerKey, auth } = admitted.hosted!;
  const signed = await signOrderV2(admitted.order, privateKeyToAccount(signerKey), admitted.venueSpec);
  return transmit(deps, admitted.row, signed, auth, deadline, admitted.giveBack);
}

export interface PreparedOrder {
  venue: 'polymarket';
  prepare_id: string;
  client_order_id: string | null;
  /** The EIP-712 payload to sign with typed-data signing (eth_signTypedData_v4), numbers as strings. */
  typed_data: Record<string, unknown>;
  order: ClobOrderV2;
  cost_usd: string;
  fee_usd: string;
  policy_version: number;
  expires_at: string;
}

/** JSON-safe typed data: uint256 values as decimal strings (as eth_signTypedData_v4 takes them). */
function jsonTypedData(data: ReturnType<typeof orderTypedDataV2>): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(data, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
  ) as Record<string, unknown>;
}

/** First half of the client-signed flow: every check, exposure reserved and fee debited on a prepared order. */
export async function prepareOrder(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null = null,
): Promise<PreparedOrder> {
  const admitted = await admitOrder(deps, actor, body, deadline, 'client_signed', key);
  // The order token is spent at the transmit: give it back now, the submit takes its own.
  await admitted.giveBack();
  return preparedView(admitted.row, deps.config.pm.chainId);
}

/** A prepared order as POST /v1/pm/orders/prepare answers it (rebuilt alike from its record). */
function preparedView(row: PmOrderRow, chainId: number): PreparedOrder {
  const { order, neg_risk: negRisk } = row.order_struct as { order: ClobOrderV2; neg_risk: boolean };
  return {
    venue: 'polymarket',
    prepare_id: row.id,
    client_order_id: row.client_order_id,
    typed_data: jsonTypedData(orderTypedDataV2(order, { chainId, negRisk })),
    order,
    cost_usd: formatUsd(BigInt(row.notional_micro)),
    fee_usd: formatUsd(BigInt(row.fee_micro)),
    policy_version: row.policy_version,
    expires_at: new Date(row.expires_at!).toISOString(),
  };
}

/** POST /v1/pm/orders under its Idempotency-Key (see the file comment). */
export async function placeOrderOnce(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null,
): Promise<KeyedAnswer<PlacedOrder>> {
  return underKey(
    deps,
    actor,
    key,
    () => placeOrder(deps, actor, body, deadline, key),
    (row) => replayPlacement(deps, row, key!.fingerprint, row.request_fingerprint),
  );
}

/** POST /v1/pm/orders/prepare under its Idempotency-Key: a replay answers the prepared order again. */
export async function prepareOrderOnce(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null,
): Promise<KeyedAnswer<PreparedOrder>> {
  return underKey(
    deps,
    actor,
    key,
    () => prepareOrder(deps, actor, body, deadline, key),
    async (row) => {
      if (row.request_fingerprint !== key!.fingerprint) throw keyReusedError();
      return preparedView(row, deps.config.pm.chainId);
    },
  );
}

/** Runs `first` unless an order holds the key already (before, or by a concurrent request): `replay` it. */
async function underKey<T>(
  deps: OrderDeps,
  actor: Actor,
  key: OrderKey | null,
  first: () => Promise<T>,
  replay: (row: PmOrderRow) => Promise<T>,
): Promise<KeyedAnswer<T>> {
  const prior = key ? await findKeyedOrder(deps.db, actor.principal.accountId, key.key) : null;
  if (prior) return { body: await replay(prior), replayed: true };
  try {
    return { body: await first(), replayed: false };
  } catch (err) {
    if (!(err instanceof KeyedOrderExists)) throw err;
    return { body: await replay(err.row), replayed: true };
  }
}

/**
 * A transmitted order, answered again for a retry with its key: as it is now. The first request
 * still running is 409; one whose transmit got no answer is looked up at the venue by its hash
 * first (placed once it shows there; 503 as the first answer while it does not).
 */
async function replayPlacement(
  deps: OrderDeps,
  row: PmOrderRow,
  fingerprint: string,
  recorded: string | null,
): Promise<PlacedOrder> {
  if (recorded !== fingerprint) throw keyReusedError();
  let now = row;
  if (now.status === 'transmitting') {
    if (now.unanswered_at === null) throw inFlight();
    await reconcileOrder(deps, now).catch(() => 'pending');
    now = (await orderById(deps.db, row.id)) ?? now;
  }
  switch (now.status) {
    case 'placed':
    case 'cancelled':
    case 'filled':
      return placedView(now);
    case 'transmitting':
      throw unansweredError(now.order_hash!);
    case 'rejected':
      throw venueRefusal(now.venue_error ?? 'refused');
    default:
      throw notFound(`Order ${now.id} was never transmitted (${now.status}).`);
  }
}

async function orderById(db: DbExecutor, id: string): Promise<PmOrderRow | undefined> {
  return db.selectFrom('pm_orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** 422 VENUE_REJECTED: the venue refused the order; nothing was placed and its fee was reversed. */
function venueRefusal(reason: string): AppError {
  return new AppError('VENUE_REJECTED', `polymarket refused the order: ${reason}`, {
    remediation: 'Nothing was placed; its fee was reversed. Adjust the order and retry.',
  });
}

/** 503: the venue did not answer the transmit; the order is decided by its hash, never sent again. */
function unansweredError(orderHash: string): AppError {
  return unavailable(
    `polymarket did not answer the order ${orderHash}: it is placed once or not at all, and Purser asks ` +
      'the venue about its hash before anything else happens to it.',
    {
      remediation:
        'Retry with the same Idempotency-Key, or read GET /v1/pm/orders in a minute; do not place it again under a new client_order_id.',
      next: [],
    },
  );
}

/** Second half: the signature must recover to the declared signer before expires_at; then transmitted. */
export async function submitOrder(
  deps: OrderDeps,
  actor: Actor,
  body: { prepare_id: string; signature: string },
  deadline: Deadline,
  key: OrderKey | null = null,
): Promise<KeyedAnswer<PlacedOrder>> {
  const accountId = actor.principal.accountId;
  const row = await deps.db
    .selectFrom('pm_orders')
    .selectAll()
    .where('id', '=', body.prepare_id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  // A retry of the submit that claimed it: the order as it is now.
  if (key && row && row.submit_key === key.key) {
    return {
      body: await replayPlacement(deps, row, key.fingerprint, row.submit_fingerprint),
      replayed: true,
    };
  }
  const gone = () =>
    notFound(`No prepared order ${body.prepare_id} awaits a signature (expired, submitted or unknown).`, {
      remediation: 'Prepare the order again with POST /v1/pm/orders/prepare.',
      next: [{ method: 'POST', path: '/v1/pm/orders/prepare', why: 'prepare it again' }],
    });
  if (!row || row.flow !== 'client_signed') throw gone();
  if (row.status === 'transmitting') {
    throw new AppError('CONFLICT', `Prepared order ${row.id} is being submitted already.`, {
      remediation: 'Read GET /v1/pm/orders in a moment.',
    });
  }
  if (row.status !== 'prepared' || new Date(row.expires_at!).getTime() <= deps.clock.now().getTime())
    throw gone();
  const { order, neg_risk: negRisk } = row.order_struct as { order: ClobOrderV2; neg_risk: boolean };
  const venueSpec = { chainId: deps.config.pm.chainId, negRisk };
  let recovered: string;
  try {
    recovered = await recoverTypedDataAddress({
      ...orderTypedDataV2(order, venueSpec),
      signature: body.signature as Hex,
    });
  } catch {
    throw invalidRequest('signature: not a 65-byte ECDSA signature of the prepared order.');
  }
  if (getAddress(recovered) !== getAddress(order.signer)) {
    throw invalidRequest(
      `signature: it recovers to ${getAddress(recovered)}, not to the declared signer ${getAddress(order.signer)}.`,
    );
  }
  const giveBack = await takeOrderToken(deps);
  let auth: ClobL2Auth;
  try {
    auth = await withTransaction(deps.db, async (tx) => {
      // Claimed once: a second submit finds it transmitting (409).
      const claimed = await updateOrder(
        tx,
        row.id,
        ['prepared'],
        {
          status: 'transmitting',
          ...(key ? { submit_key: key.key, submit_fingerprint: key.fingerprint } : {}),
        },
        deps.clock.now(),
      );
      if (!claimed) {
        throw new AppError('CONFLICT', `Prepared order ${row.id} is no longer awaiting a signature.`, {
          remediation: 'Read GET /v1/pm/orders.',
        });
      }
      const used = await useCredential(tx, deps, {
        accountId,
        credentialId: row.credential_id,
        operation: 'order.place',
        actor,
      });
      if (!used || used.material.venue !== 'polymarket') throw noActiveCredential(row.credential_id);
      return {
        address: getAddress(order.signer),
        creds: clobCredsOf(used.material),
      };
    });
  } catch (err) {
    await giveBack();
    throw err;
  }
  const claimedRow = { ...row, status: 'transmitting' as const };
  const signed = { ...order, signature: body.signature as Hex };
  return { body: await transmit(deps, claimedRow, signed, auth, deadline, giveBack), replayed: false };
}

/** Prepared orders past their expiry: swept, exposure released, fee reversed (a job). */
export async function sweepPrepared(deps: OrderDeps): Promise<number> {
  const expired = await deps.db
    .selectFrom('pm_orders')
    .selectAll()
    .where('status', '=', 'prepared')
    .where('expires_at', '<', deps.clock.now())
    .limit(500)
    .execute();
  for (const row of expired) await closeUnsent(deps, row, 'swept', 'expired without a signature');
  return expired.length;
}

/** Transmits an admitted, signed order: the budget checked before, never after. */
async function transmit(
  deps: OrderDeps,
  row: PmOrderRow,
  signed: ClobSignedOrderV2,
  auth: ClobL2Auth,
  deadline: Deadline,
  giveBack: () => Promise<void>,
): Promise<PlacedOrder> {
  const orderHash = row.order_hash!;
  if (deadline.expired()) {
    await giveBack();
    await closeUnsent(deps, row, 'rejected', 'the time budget ran out before the transmit');
    throw deadline.exceeded('before transmitting the order');
  }
  let answer;
  try {
    deadline.markTransmitted(`order ${orderHash}`);
    answer = await deps.clob.postOrder(
      auth,
      signed,
      { orderType: 'GTC' },
      { timeoutMs: deadline.remainingMs() },
    );
  } catch (err) {
    if (err instanceof VenueRejected) {
      await closeUnsent(deps, row, 'rejected', err.message);
      throw venueRefusal(err.message);
    }
    if (err instanceof VenueUnavailable) {
      // Marked, so a retry with the key knows the first request ended and asks the venue.
      await deps.db
        .updateTable('pm_orders')
        .set({ unanswered_at: deps.clock.now() })
        .where('id', '=', row.id)
        .where('status', '=', 'transmitting')
        .execute();
      throw unansweredError(orderHash);
    }
    throw err;
  }
  // Crash tests: the venue has the order, Purser has not recorded it (the reconciler finds it).
  if (deps.config.pm.faultCrash === 'after_transmit') process.kill(process.pid, 'SIGKILL');
  const placed = await recordPlaced(deps, row, answer.status);
  return placedView(placed);
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

/** An order that never left (refused by the venue, or out of budget): exposure released, fee reversed. */
async function closeUnsent(
  deps: OrderDeps,
  row: PmOrderRow,
  status: 'rejected' | 'swept',
  why: string,
): Promise<void> {
  await withTransaction(deps.db, async (tx) => {
    const closed = await updateOrder(
      tx,
      row.id,
      ['transmitting', 'prepared'],
      { status, venue_error: why.slice(0, 500) },
      deps.clock.now(),
    );
    if (!closed || !closed.fee_group_id) return;
    const reversed = await reverseGroup(tx, deps.clock, {
      groupId: closed.fee_group_id,
      accountId: row.account_id,
      reason: `pm order ${row.id} not placed`,
    });
    if (!reversed.ok) throw new Error(`the fee of ${row.id} could not be reversed: ${reversed.reason}`);
  });
}

async function recordPlaced(deps: OrderDeps, row: PmOrderRow, venueStatus: string): Promise<PmOrderRow> {
  return withTransaction(deps.db, async (tx) => {
    const placed = await updateOrder(
      tx,
      row.id,
      ['transmitting'],
      { status: 'placed', venue_status: venueStatus },
      deps.clock.now(),
    );
    if (!placed) throw notFound(`Order ${row.id} changed while it was transmitted.`);
    await emitEvent(tx, deps.clock, {
      accountId: row.account_id,
      kind: 'pm.order.placed',
      subject: row.id,
      payload: {
        id: row.id,
        venue: 'polymarket',
        order_id: row.order_hash,
        wallet: row.wallet,
        condition_id: row.condition_id,
        token_id: row.token_id,
        side: row.side,
        price_usd: formatUsd(BigInt(row.price_micro)),
        size_shares: formatUsd(BigInt(row.size_micro)),
        cost_usd: formatUsd(BigInt(row.notional_micro)),
        fee_usd: formatUsd(BigInt(row.fee_micro)),
        venue_status: venueStatus,
        client_order_id: row.client_order_id,
      },
    });
    return placed;
  });
}

export function placedView(row: PmOrderRow): PlacedOrder {
  return {
    venue: 'polymarket',
    order_id: row.order_hash!,
    status: row.venue_status ?? row.status,
    cost_usd: formatUsd(BigInt(row.notional_micro)),
    fee_usd: formatUsd(BigInt(row.fee_micro)),
    policy_version: row.policy_version,
  };
}

// ---------------------------------------------------------------------------------------------
// Reads and cancels: authenticated with the stored credential (a use), never blocked by a switch.

/** The venue lane of a read or a cancel: 429 with Retry-After when the platform budget is spent. */
export async function takeLane(deps: OrderDeps, kind: 'reads' | 'cancels'): Promise<void> {
  const taken = await takeLaneToken(deps, kind);
  if (taken.ok) return;
  const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
  throw new AppError(
    'RATE_LIMITED',
    `The platform's ${kind === 'reads' ? 'read budget' : 'cancel lane'} for polymarket is spent for now.`,
    {
      remediation: `Retry after ${seconds} s (Retry-After).`,
      headers: { 'retry-after': String(seconds) },
    },
  );
}

/** Opens a polymarket credential of the account for `operation` and gives its L2 authentication. */
export async function venueAuth(
  deps: OrderDeps,
  actor: Actor,
  credentialId: string,
  operation: 'orders.read' | 'order.cancel' | 'fills.sync',
): Promise<ClobL2Auth> {
  const used = await withTransaction(deps.db, (tx) =>
    useCredential(tx, deps, { accountId: actor.principal.accountId, credentialId, operation, actor }),
  );
  if (!used) throw noActiveCredential(credentialId);
  if (used.material.venue !== 'polymarket' || !used.row.signer_address) {
    throw invalidRequest(`credential_id: a ${used.row.venue} credential has no polymarket orders.`);
  }
  return {
    address: getAddress(used.row.signer_address),
    creds: clobCredsOf(used.material),
  };
}

export function venueFailure(err: unknown, what: string): unknown {
  if (err instanceof VenueRejected)
    return new AppError('VENUE_REJECTED', `polymarket refused ${what}: ${err.message}`);
  if (err instanceof VenueUnavailable) {
    return unavailable(`polymarket did not answer ${what}: ${err.message}`, {
      remediation: 'Retry in a few seconds.',
      next: [],
    });
  }
  return err;
}

export interface RestingOrder {
  order_id: string;
  status: string;
  market: string;
  token_id: string;
  side: 'buy' | 'sell';
  price_usd: string;
  original_size_shares: string;
  matched_size_shares: string;
  outcome: string;
  created_at: string;
}

/** The venue's resting orders of the credential (venue-authoritative). */
export async function listRestingOrders(
  deps: OrderDeps,
  actor: Actor,
  query: { credential_id: string; market?: string | undefined },
  deadline: Deadline,
): Promise<{ orders: RestingOrder[] }> {
  await takeLane(deps, 'reads');
  const auth = await venueAuth(deps, actor, query.credential_id, 'orders.read');
  deadline.check('reading the venue');
  let open;
  try {
    open = await deps.clob.openOrders(auth, query.market ? { market: query.market } : {}, {
      timeoutMs: deadline.remainingMs(),
    });
  } catch (err) {
    throw venueFailure(err, 'the open-orders read');
  }
  return {
    orders: open.map((o) => ({
      order_id: o.id.toLowerCase(),
      status: o.status,
      market: o.market,
      token_id: o.asset_id,
      side: o.side === 'BUY' ? ('buy' as const) : ('sell' as const),
      price_usd: o.price,
      original_size_shares: o.original_size,
      matched_size_shares: o.size_matched,
      outcome: o.outcome,
      created_at: new Date(o.created_at * 1000).toISOString(),
    })),
  };
}

/** Marks the account's orders the venue cancelled: their exposure is released (events per order). */
async function recordCancelled(deps: OrderDeps, accountId: string, orderIds: string[]): Promise<void> {
  if (orderIds.length === 0) return;
  await withTransaction(deps.db, async (tx) => {
    const rows = await tx
      .updateTable('pm_orders')
      .set({ status: 'cancelled', venue_status: 'CANCELED', updated_at: deps.clock.now() })
      .where('account_id', '=', accountId)
      .where(
        'order_hash',
        'in',
        orderIds.map((i) => i.toLowerCase()),
      )
      .where('status', 'in', ['placed', 'transmitting'])
      .returning(['id', 'order_hash', 'wallet'])
      .execute();
    for (const r of rows) {
      await emitEvent(tx, deps.clock, {
        accountId,
        kind: 'pm.order.cancelled',
        subject: r.id,
        payload: { id: r.id, venue: 'polymarket', order_id: r.order_hash, wallet: r.wallet },
      });
    }
  });
}

export async function cancelOne(
  deps: OrderDeps,
  actor: Actor,
  orderId: string,
  credentialId: string,
  deadline: Deadline,
): Promise<{ venue: 'polymarket'; order_id: string; status: string }> {
  await takeLane(deps, 'cancels');
  const auth = await venueAuth(deps, actor, credentialId, 'order.cancel');
  deadline.check('transmitting the cancel');
  let result;
  try {
    result = await deps.clob.cancelOrder(auth, orderId, { timeoutMs: deadline.remainingMs() });
  } catch (err) {
    throw venueFailure(err, 'the cancel');
  }
  const done = result.canceled.some((c) => c.toLowerCase() === orderId.toLowerCase());
  if (!done) {
    const why = Object.entries(result.notCanceled).find(
      ([k]) => k.toLowerCase() === orderId.toLowerCase(),
    )?.[1];
    throw new AppError(
      'VENUE_REJECTED',
      `polymarket did not cancel ${orderId}: ${why ?? 'no reason given'}.`,
      {
        remediation: 'It may be filled or cancelled already: read GET /v1/pm/orders.',
      },
    );
  }
  await recordCancelled(deps, actor.principal.accountId, [orderId]);
  return { venue: 'polymarket', order_id: orderId.toLowerCase(), status: 'cancelled' };
}

/** Order ids per `DELETE /orders` call of a cancel-all run; the budget is checked before each. */
export const CANCEL_BATCH = 100;

/**
 * Cancels the credential's resting orders (one market's with `market`): lists them, then cancels
 * them in batches, checking the time budget and taking a cancel-lane token before each batch after
 * the first. A run that started and then ran out of budget or lane, or lost the venue, answers what
 * it cancelled with `complete: false` and the ids it could not cancel; they are still listed at the
 * venue for the next run. Orders placed while a run runs are not in it.
 */
export async function cancelAllOf(
  deps: OrderDeps,
  actor: Actor,
  query: { credential_id: string; market?: string | undefined },
  deadline: Deadline,
  batchSize = CANCEL_BATCH,
): Promise<{
  venue: 'polymarket';
  cancelled: number;
  order_ids: string[];
  failed_order_ids?: string[];
  complete: boolean;
}> {
  await takeLane(deps, 'cancels');
  const auth = await venueAuth(deps, actor, query.credential_id, 'order.cancel');
  deadline.check('reading the open orders to cancel');
  let ids: string[];
  try {
    const open = await deps.clob.openOrders(auth, query.market ? { market: query.market } : {}, {
      timeoutMs: deadline.remainingMs(),
    });
    ids = open.map((o) => o.id.toLowerCase());
  } catch (err) {
    throw venueFailure(err, 'the open orders read');
  }
  const cancelled: string[] = [];
  const failed: string[] = [];
  let stopped = false;
  for (let at = 0; at < ids.length; at += batchSize) {
    const batch = ids.slice(at, at + batchSize);
    if (!stopped && at > 0) stopped = !(await takeLaneToken(deps, 'cancels')).ok;
    if (!stopped && deadline.expired()) stopped = true;
    if (stopped) {
      failed.push(...batch);
      continue;
    }
    try {
      const result = await deps.clob.cancelOrders(auth, batch, { timeoutMs: deadline.remainingMs() });
      const done = result.canceled.map((i) => i.toLowerCase());
      cancelled.push(...done);
      await recordCancelled(deps, actor.principal.accountId, done);
      const kept = new Set(Object.keys(result.notCanceled).map((i) => i.toLowerCase()));
      failed.push(...batch.filter((i) => kept.has(i) || !done.includes(i)));
    } catch (err) {
      if (!(err instanceof VenueRejected) && !(err instanceof VenueUnavailable)) throw err;
      // A refusal or no answer: this batch may or may not be cancelled; the rest is not tried.
      failed.push(...batch);
      stopped = true;
    }
  }
  return {
    venue: 'polymarket',
    cancelled: cancelled.length,
    order_ids: cancelled,
    ...(failed.length > 0 ? { failed_order_ids: failed } : {}),
    complete: failed.length === 0,
  };
}

/** One token of the venue's `kind` lane, if the lane has one now. */
function takeLaneToken(deps: OrderDeps, kind: 'reads' | 'cancels') {
  return takeTokens(deps.db, deps.clock, rateLaneName('polymarket', kind), deps.config.pm.rateLanes[kind]);
}

// ---------------------------------------------------------------------------------------------
// Reconciling orders whose transmit got no answer (a venue timeout, a crash between transmit and
// record): the venue is asked about the order's hash; nothing is ever sent again.

/** How long an unanswered order waits before the venue is asked about it. */
export const RECONCILE_AFTER_MS = 30_000;
/** An order the venue still does not know after this long never arrived: closed, fee reversed. */
export const UNKNOWN_AFTER_MS = 10 * 60_000;

export async function reconcileTransmitting(
  deps: OrderDeps,
  log: { warn(obj: object, msg: string): void },
): Promise<{ placed: number; closed: number; pending: number }> {
  const now = deps.clock.now().getTime();
  const rows = await transmittingBefore(deps.db, new Date(now - RECONCILE_AFTER_MS), 100);
  const out = { placed: 0, closed: 0, pending: 0 };
  for (const row of rows) {
    try {
      out[await reconcileOrder(deps, row)] += 1;
    } catch (err) {
      log.warn(
        { err: (err as Error).message, order: row.id },
        'a transmitting order could not be reconciled yet',
      );
      out.pending += 1;
    }
  }
  return out;
}

/**
 * Asks the venue about one transmitting order's hash (its order, else its trades): `placed` once it
 * shows there; `closed` (fee reversed) when it never did for UNKNOWN_AFTER_MS; else `pending`. A
 * revoked credential cannot ask: `pending`. Never sends anything.
 */
async function reconcileOrder(deps: OrderDeps, row: PmOrderRow): Promise<'placed' | 'closed' | 'pending'> {
  const used = await withTransaction(deps.db, (tx) =>
    useCredential(tx, deps, {
      accountId: row.account_id,
      credentialId: row.credential_id,
      operation: 'orders.read',
      actor: null,
    }),
  );
  if (!used || used.material.venue !== 'polymarket' || !used.row.signer_address) return 'pending';
  const auth: ClobL2Auth = {
    address: getAddress(used.row.signer_address),
    creds: clobCredsOf(used.material),
  };
  const found = await deps.clob.getOrder(auth, row.order_hash!);
  const status = found ? found.status.toLowerCase() : await statusFromTrades(deps, auth, row);
  if (status) {
    await recordPlaced(deps, row, status);
    return 'placed';
  }
  if (deps.clock.now().getTime() - new Date(row.updated_at).getTime() > UNKNOWN_AFTER_MS) {
    await closeUnsent(deps, row, 'rejected', 'the venue never showed the order');
    return 'closed';
  }
  return 'pending';
}

/** Pages of trades the reconciler reads at most when looking for an order. */
const TRADE_PAGES = 5;

/**
 * `matched` when one of the venue's trades of the order's market and outcome, since shortly before
 * the order was recorded, names it as taker or maker. The live `GET /data/order` was reported to
 * answer nothing for an order that matched in full at once: its trades still show it.
 */
async function statusFromTrades(deps: OrderDeps, auth: ClobL2Auth, row: PmOrderRow): Promise<string | null> {
  const hash = row.order_hash!.toLowerCase();
  const after = Math.floor(new Date(row.created_at).getTime() / 1000) - 60;
  let cursor: string | undefined;
  for (let page = 0; page < TRADE_PAGES; page += 1) {
    const answer = await deps.clob.trades(auth, {
      market: row.condition_id,
      assetId: row.token_id,
      after,
      ...(cursor ? { cursor } : {}),
    });
    const names = (t: ClobTrade) =>
      t.taker_order_id.toLowerCase() === hash ||
      t.maker_orders.some((m) => m.order_id.toLowerCase() === hash);
    if (answer.trades.some(names)) return 'matched';
    if (!answer.nextCursor) return null;
    cursor = answer.nextCursor;
  }
  return null;
}

/** The account's orders for the export: what Purser recorded, without signatures. */
export async function exportOrders(
  db: DbExecutor,
  accountId: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom('pm_orders')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    venue: r.venue,
    order_id: r.order_hash,
    wallet: r.wallet,
    credential_id: r.credential_id,
    client_order_id: r.client_order_id,
    condition_id: r.condition_id,
    token_id: r.token_id,
    side: r.side,
    price_usd: formatUsd(BigInt(r.price_micro)),
    size_shares: formatUsd(BigInt(r.size_micro)),
    cost_usd: formatUsd(BigInt(r.notional_micro)),
    fee_usd: formatUsd(BigInt(r.fee_micro)),
    status: r.status,
    venue_status: r.venue_status,
    venue_error: r.venue_error,
    state: r.state,
    policy_version: r.policy_version,
    policy_hash: r.policy_hash,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  }));
}
