// The job table: every background job the workers run and every periodic schedule, in one place
// (the counterpart of src/routes.ts). Handlers must be idempotent: jobs run at least once.

import { enqueueJob, type JobHandler, type JobSchedule } from './core/jobs/index.ts';
import { purgeExpiredIdempotencyKeys } from './core/http/idempotency.ts';
import { keyringOf } from './core/sealing.ts';
import { orderDeps, reconcileTransmitting, sweepPrepared } from './modules/pm/index.ts';
import type { AppDeps } from './deps.ts';
import { expireArrows, FIRE_JOB, fireAutoTopup, syncSettlingArrows } from './modules/billing/auto-topup.ts';
import { chainWatchDeps, reconcileChains, watchChains } from './modules/chainwatch/index.ts';
import { expireDelegations } from './modules/delegations/index.ts';
import {
  failIntent,
  reconcileAbandonedSlices,
  runIntentStep,
  type RunDeps,
} from './modules/executor/index.ts';
import { purgePaymentChallenges } from './modules/feedback/index.ts';
import {
  compactWebhookEnvelopes,
  purgeExpiredSiweNonces,
  purgeNetworkContext,
  purgeVenueCredentialUsage,
  resealStale,
  purgeOffboardedStatementExports,
  purgeTestAccounts,
  purgeWebhookOutbox,
} from './modules/housekeeping/index.ts';
import { EXECUTE_JOB } from './modules/intents/index.ts';
import { expireHolds } from './modules/ledger/index.ts';
import { reconcileStaleSettlements } from './modules/payments/index.ts';
import {
  BURN_JOB,
  completePendingRebalances,
  enqueueMintCheck,
  MINT_JOB,
  rebalanceRunDeps,
  runBurn,
  runMintCheck,
} from './modules/rebalances/index.ts';
import { expireReservations } from './modules/policies/index.ts';
import { reconcilePrefundDeposits } from './modules/smart-account/index.ts';
import { settlementEffects } from './settlement-effects.ts';
import { withTransaction } from './core/db/database.ts';

/** What the executor runs with, from the application's dependencies (null without a chain port). */
function executorDeps(deps: AppDeps): RunDeps | null {
  if (!deps.chain || !deps.tokenRegistry) return null;
  return {
    config: deps.config,
    clock: deps.clock,
    db: deps.db,
    registry: deps.tokenRegistry,
    chain: deps.chain,
    bundler: deps.bundler,
    venues: deps.venues ?? [],
    prices: deps.prices,
    log: deps.log,
  };
}

/** How long the burn job waits before looking again at a burn whose receipts did not come. */
const BURN_RECHECK_MS = 30_000;
/** How long the mint job waits before looking again at a mint whose receipt did not come. */
const MINT_RECHECK_MS = 60_000;

export function jobHandlers(deps: AppDeps): Record<string, JobHandler> {
  const executor = executorDeps(deps);
  const rebalances = rebalanceRunDeps(deps);
  const watch = chainWatchDeps(deps);
  return {
    // A planned rebalance's burn (docs/rebalances.md): signed, recorded, sent, then booked once its
    // receipts are in; a burn still unconfirmed is looked at again (and by the hourly job).
    [BURN_JOB]: async (job) => {
      const id = (job.payload as { rebalance_id?: unknown } | null)?.rebalance_id;
      if (typeof id !== 'string') return;
      if (!rebalances) throw new Error('rebalances need a chain port and an attestation service');
      const step = await runBurn(rebalances, id);
      if (step.state === 'waiting') {
        const runAt = new Date(deps.clock.now().getTime() + BURN_RECHECK_MS);
        await enqueueJob(deps.db, deps.clock, {
          name: BURN_JOB,
          payload: { rebalance_id: id },
          runAt,
          singletonKey: `${id}:${runAt.getTime()}`,
        });
      }
    },
    // A submitted mint (docs/rebalances.md): settled once its receipt is in, looked at again every
    // minute until then, so a process killed after the broadcast delays it by a minute at most.
    [MINT_JOB]: async (job) => {
      const id = (job.payload as { rebalance_id?: unknown } | null)?.rebalance_id;
      if (typeof id !== 'string') return;
      if (!rebalances) throw new Error('rebalances need a chain port and an attestation service');
      if ((await runMintCheck(rebalances, id)) === 'waiting')
        await enqueueMintCheck(deps.db, deps, id, MINT_RECHECK_MS);
    },
    // Spec: an hourly job completes every rebalance awaiting attestation (and moves on what a
    // crash left behind).
    'rebalances.complete': async () => {
      if (!rebalances) return;
      const done = await completePendingRebalances(rebalances);
      if (done.minted + done.moved + done.failed > 0)
        deps.log.info(done, 'rebalances completed by the hourly job');
    },
    // One step of an intent's run (docs/executor.md); the next step is a new job, so no worker
    // sleeps between slices. A step that keeps failing ends the intent EXECUTION_ERROR.
    [EXECUTE_JOB]: async (job, ctx) => {
      const id = (job.payload as { intent_id?: unknown } | null)?.intent_id;
      if (typeof id !== 'string') return;
      try {
        if (!executor) throw new Error('the executor has no chain port or token registry');
        const step = await runIntentStep(executor, id);
        if (step.state === 'continue') {
          await enqueueJob(deps.db, deps.clock, {
            name: EXECUTE_JOB,
            payload: { intent_id: id },
            runAt: step.runAt,
            singletonKey: `${id}:${step.runAt.getTime()}`,
          });
        }
      } catch (err) {
        if (ctx.attempt < job.max_attempts || !executor) throw err;
        const ended = await failIntent(executor, id, (err as Error).message);
        deps.log.error({ err, intent: id, ended }, 'intent step failed on its last attempt');
      }
    },
    'housekeeping.idempotency_keys': async () => {
      const deleted = await purgeExpiredIdempotencyKeys(deps.db, deps.clock);
      if (deleted > 0) deps.log.info({ deleted }, 'expired idempotency keys deleted');
    },
    // Operations of ended runs that were unconfirmed when they ended: ledgered if they land late.
    // Relayer deposits a crash or a timeout left unsettled: booked from their receipts.
    'executor.reconcile': async () => {
      if (!executor) return;
      const settled = await reconcileAbandonedSlices(executor);
      if (settled > 0) deps.log.info({ settled }, 'slices of ended intents settled');
      const deposits = await reconcilePrefundDeposits(executor);
      if (deposits > 0) deps.log.info({ deposits }, 'relayer prefund deposits settled');
    },
    // Retention (src/modules/housekeeping): batched, idempotent deletes of rows past their period.
    'housekeeping.siwe_nonces': async () => {
      const deleted = await purgeExpiredSiweNonces(deps.db, deps.clock);
      if (deleted > 0) deps.log.info({ deleted }, 'expired sign-in nonces deleted');
    },
    'housekeeping.network_context': async () => {
      const deleted = await purgeNetworkContext(deps.db, deps.clock);
      if (deleted.networkContext + deleted.credentialUses + deleted.venueCredentialNetworks > 0)
        deps.log.info(deleted, 'network context older than 90 days deleted');
      const usage = await purgeVenueCredentialUsage(deps.db, deps.clock);
      if (usage > 0)
        deps.log.info({ deleted: usage }, 'venue credential use counts older than 8 days deleted');
    },
    // Prediction-market orders whose transmit got no answer: the venue is asked about their hash
    // (docs/prediction-markets.md, "Orders"); nothing is sent again.
    'pm.orders.reconcile': async () => {
      if (!deps.pmVenues) return;
      const done = await reconcileTransmitting(orderDeps(deps), deps.log);
      if (done.placed + done.closed > 0)
        deps.log.info(done, 'unanswered prediction-market orders reconciled');
    },
    // Prepared (client-signed) orders past expires_at: exposure released, fee reversed.
    'pm.orders.sweep': async () => {
      if (!deps.pmVenues) return;
      const swept = await sweepPrepared(orderDeps(deps));
      if (swept > 0) deps.log.info({ swept }, 'expired prepared prediction-market orders swept');
    },
    // Moves sealed values onto the newest sealing key (docs/operations.md, "Sealing keys").
    'sealing.reseal': async () => {
      const moved = await resealStale(deps.db, keyringOf(deps.config.sealingKeys));
      if (moved.webhookSecrets + moved.venueCredentials > 0)
        deps.log.info(moved, 'sealed values moved onto the newest sealing key');
      if (moved.unopenable > 0)
        deps.log.error(
          { unopenable: moved.unopenable },
          'sealed values that no configured sealing key opens: put the removed key back in PURSER_SEALING_KEYS',
        );
    },
    'housekeeping.webhook_outbox': async () => {
      const deleted = await purgeWebhookOutbox(deps.db, deps.clock);
      if (deleted > 0) deps.log.info({ deleted }, 'settled webhook outbox rows deleted');
    },
    'housekeeping.webhook_envelopes': async () => {
      const compacted = await compactWebhookEnvelopes(deps.db, deps.clock);
      if (compacted > 0) deps.log.info({ compacted }, 'webhook envelopes older than 90 days compacted');
    },
    // Offboarding schedules these: objects first, then their rows.
    'housekeeping.statement_exports': async () => {
      const deleted = await purgeOffboardedStatementExports(deps.db, deps.objectStore);
      if (deleted > 0) deps.log.info({ deleted }, 'statement exports of offboarded accounts deleted');
    },
    // x402 challenges of POST /v1/feedback: unused ones after 1 day, used ones 7 days after use.
    'housekeeping.payment_challenges': async () => {
      const deleted = await purgePaymentChallenges(deps.db, deps.clock);
      if (deleted.unused + deleted.used > 0) deps.log.info(deleted, 'expired payment challenges deleted');
    },
    'housekeeping.test_accounts': async () => {
      const deleted = await purgeTestAccounts(deps.db, deps.clock, deps.config.env);
      if (deleted.length > 0) deps.log.info({ deleted }, 'development test accounts deleted');
    },
    // Pending spend holds stop counting at their expiry anyway; this closes them for the record.
    'reservations.expire': async () => {
      const expired = await expireReservations(deps.db, deps.clock);
      if (expired.length > 0) deps.log.info({ expired: expired.length }, 'spend reservations expired');
    },
    // Ledger holds past their expiry stopped counting already; this gives prepaid reservations back.
    'ledger.expire_holds': async () => {
      const expired = await withTransaction(deps.db, (tx) => expireHolds(tx, deps.clock));
      if (expired.length > 0) deps.log.info({ expired: expired.length }, 'ledger holds expired');
    },
    // Grants past valid_until: the chain refuses them already; this records it (event + audit).
    'delegations.expire': async () => {
      const expired = await expireDelegations(deps.db, deps.clock);
      if (expired > 0) deps.log.info({ expired }, 'delegations expired');
    },
    // Payments a request left unfinished (crash, timeout): finished from chain truth.
    'payments.reconcile': async () => {
      if (!deps.chain) return;
      const done = await reconcileStaleSettlements(deps, settlementEffects());
      if (done.settled + done.failed > 0) deps.log.info(done, 'payment settlements reconciled');
    },
    // Enqueued by the prepaid_balances trigger (migration 0013) when a debit crosses the threshold.
    [FIRE_JOB]: async (job) => {
      const accountId = (job.payload as { account_id?: unknown } | null)?.account_id;
      if (!deps.chain || typeof accountId !== 'string') return;
      const fired = await fireAutoTopup(deps, settlementEffects(), accountId);
      if (fired.state !== 'idle' || fired.failed > 0)
        deps.log.info({ account: accountId, ...fired }, 'auto-top-up');
    },
    // Arrows whose settlement the reconciler failed: failed too, and the next arrow gets its turn.
    'auto_topup.sync': async () => {
      if (!deps.chain) return;
      const failed = await syncSettlingArrows(deps);
      if (failed > 0) deps.log.info({ failed }, 'auto-top-up arrows failed after reconciliation');
    },
    // The chain watcher (docs/ledger.md, "The chain"): books what reached or left watched wallets.
    [CHAIN_WATCH_JOB]: async () => {
      if (!watch || !deps.config.chainWatch.enabled) return;
      const reports = await watchChains(watch);
      for (const r of reports) {
        if (r.booked > 0 || r.opened > 0 || r.reorgFrom !== null || !r.caughtUp) {
          deps.log.info({ ...r }, 'chain watched');
        }
      }
    },
    // Reconciliation (docs/ledger.md): books against chain for every watched wallet; drifts raised.
    [CHAIN_RECONCILE_JOB]: async () => {
      if (!watch || !deps.config.chainWatch.enabled) return;
      const reports = await reconcileChains(watch);
      for (const r of reports) {
        if (r.raised > 0 || r.agreed > 0)
          deps.log.warn({ ...r }, 'books and chain reconciled: drift changed');
      }
    },
    'auto_topup.expire': async () => {
      const expired = await expireArrows(deps.db, deps.clock);
      if (expired > 0) deps.log.info({ expired }, 'auto-top-up arrows expired');
    },
  };
}

/** The chain watcher's job, and reconciliation's. */
export const CHAIN_WATCH_JOB = 'chain.watch';
export const CHAIN_RECONCILE_JOB = 'chain.reconcile';

/** The schedules a worker runs with this configuration: the fixed ones and the chain watcher's. */
export function schedulesFor(config: AppDeps['config']): JobSchedule[] {
  if (!config.chainWatch.enabled) return jobSchedules;
  return [
    ...jobSchedules,
    { name: CHAIN_WATCH_JOB, everySeconds: config.chainWatch.everySeconds, jobName: CHAIN_WATCH_JOB },
    {
      name: CHAIN_RECONCILE_JOB,
      everySeconds: config.chainWatch.reconcileEverySeconds,
      jobName: CHAIN_RECONCILE_JOB,
    },
  ];
}

export const jobSchedules: JobSchedule[] = [
  { name: 'housekeeping.idempotency_keys', everySeconds: 3600, jobName: 'housekeeping.idempotency_keys' },
  { name: 'housekeeping.siwe_nonces', everySeconds: 3600, jobName: 'housekeeping.siwe_nonces' },
  { name: 'housekeeping.network_context', everySeconds: 3600, jobName: 'housekeeping.network_context' },
  { name: 'housekeeping.webhook_outbox', everySeconds: 3600, jobName: 'housekeeping.webhook_outbox' },
  { name: 'housekeeping.test_accounts', everySeconds: 3600, jobName: 'housekeeping.test_accounts' },
  { name: 'housekeeping.webhook_envelopes', everySeconds: 3600, jobName: 'housekeeping.webhook_envelopes' },
  {
    name: 'housekeeping.statement_exports',
    everySeconds: 3600,
    jobName: 'housekeeping.statement_exports',
  },
  {
    name: 'housekeeping.payment_challenges',
    everySeconds: 3600,
    jobName: 'housekeeping.payment_challenges',
  },
  { name: 'rebalances.complete', everySeconds: 3600, jobName: 'rebalances.complete' },
  { name: 'sealing.reseal', everySeconds: 3600, jobName: 'sealing.reseal' },
  { name: 'pm.orders.reconcile', everySeconds: 60, jobName: 'pm.orders.reconcile' },
  { name: 'pm.orders.sweep', everySeconds: 60, jobName: 'pm.orders.sweep' },
  { name: 'reservations.expire', everySeconds: 60, jobName: 'reservations.expire' },
  { name: 'executor.reconcile', everySeconds: 60, jobName: 'executor.reconcile' },
  { name: 'delegations.expire', everySeconds: 60, jobName: 'delegations.expire' },
  { name: 'ledger.expire_holds', everySeconds: 60, jobName: 'ledger.expire_holds' },
  { name: 'payments.reconcile', everySeconds: 10, jobName: 'payments.reconcile' },
  { name: 'auto_topup.sync', everySeconds: 60, jobName: 'auto_topup.sync' },
  { name: 'auto_topup.expire', everySeconds: 60, jobName: 'auto_topup.expire' },
];
