// The money's settings: payments to the platform, the price references, the prepaid caps, the fee
// schedule and where statement exports are stored. Read by loadConfig (src/config.ts).

import { parsePriceFeeds, parseSequencerFeeds, parseStatementsS3 } from '../parse.ts';
import type { EnvReader } from '../reader.ts';
import {
  type Config,
  DEVNET_RELAYER_PRIVATE_KEY,
  DEVNET_TREASURY_ADDRESS,
  SUPPORTED_CHAINS,
} from '../settings.ts';

export type PaymentsTarget = Pick<Config['payments'], 'chainId' | 'treasury'>;

/**
 * The chain payments are made on and the treasury they are made to. loadConfig reads them before
 * the service's limits, where their problems have always been reported; the rest of the payments'
 * settings come with readPayments.
 */
export function readPaymentsTarget(r: EnvReader, production: boolean): PaymentsTarget {
  const chainId = r.int('PAYMENTS_CHAIN_ID', 8453, 1, 2 ** 31);
  if (!SUPPORTED_CHAINS.includes(chainId)) {
    r.problems.push(`PAYMENTS_CHAIN_ID must be one of ${SUPPORTED_CHAINS.join(', ')}`);
  }
  const treasury =
    r.str('PURSER_TREASURY_ADDRESS')?.toLowerCase() ?? (production ? null : DEVNET_TREASURY_ADDRESS);
  if (treasury !== null && !/^0x[0-9a-f]{40}$/.test(treasury)) {
    r.problems.push('PURSER_TREASURY_ADDRESS must be an address (0x followed by 40 hex characters)');
  }
  return { chainId, treasury: treasury as `0x${string}` | null };
}

/** Payments to the platform: their target (readPaymentsTarget), the relayer's key, the waits. */
export function readPayments(r: EnvReader, production: boolean, target: PaymentsTarget): Config['payments'] {
  return {
    chainId: target.chainId,
    treasury: target.treasury,
    relayerPrivateKey: r.hexKey('PURSER_RELAYER_PRIVATE_KEY', production ? null : DEVNET_RELAYER_PRIVATE_KEY),
    confirmTimeoutMs: r.int('PAYMENTS_CONFIRM_TIMEOUT_MS', 8_000, 100, 120_000),
    reconcileAfterSeconds: r.int('PAYMENTS_RECONCILE_AFTER_SECONDS', 30, 1, 86_400),
    minValiditySeconds: r.int('PAYMENTS_MIN_VALIDITY_SECONDS', 30, 1, 3_600),
    crashAfterBroadcast: !production && r.bool('PURSER_FAULT_CRASH_AFTER_BROADCAST', false),
  };
}

/** The independent USD price references: feeds, staleness, refresh, sequencer uptime feeds. */
export function readPrices(r: EnvReader): Config['prices'] {
  return {
    feeds: parsePriceFeeds(r.str('PRICE_FEEDS'), r.problems),
    marginSeconds: r.int('PRICE_STALENESS_MARGIN_SECONDS', 60, 0, 3_600),
    refreshIntervalMs: r.int('PRICE_REFRESH_INTERVAL_MS', 30_000, 1_000, 3_600_000),
    devnetHeartbeatSeconds: r.int('PRICE_DEVNET_HEARTBEAT_SECONDS', 604_800, 1, 31_536_000),
    sequencers: parseSequencerFeeds(r.str('PRICE_SEQUENCER_FEEDS'), r.problems),
    sequencerGraceSeconds: r.int('PRICE_SEQUENCER_GRACE_SECONDS', 3_600, 0, 86_400),
  };
}

/** The default caps on prepaid money: per account and over the whole float. */
export function readPrepaid(r: EnvReader): Config['prepaid'] {
  return {
    accountCapMicro: r.usd('PREPAID_ACCOUNT_CAP_USD', '1000'),
    floatCapMicro: r.usd('PREPAID_FLOAT_CAP_USD', '1000000'),
  };
}

/** The fee schedule and whether metering is enforced. */
export function readFees(r: EnvReader): Config['fees'] {
  return {
    meteringEnforced: r.bool('METERING_ENFORCED', true),
    conversionIntentMicro: r.usd('FEE_CONVERSION_INTENT_USD', '0.05'),
    pmOrderBaseMicro: r.usd('FEE_PM_ORDER_BASE_USD', '0.02'),
    pmOrderBps: r.int('FEE_PM_ORDER_BPS', 10, 0, 10_000),
    feedbackMicro: 1_000_000n,
  };
}

/** Where statement exports are stored: a directory (under the data directory) or a bucket. */
export function readStatements(r: EnvReader): Config['statements'] {
  return {
    dir:
      r.str('STATEMENTS_DIR') ?? `${(r.str('PURSER_DATA_DIR') ?? '.purser').replace(/\/+$/, '')}/statements`,
    s3: parseStatementsS3(r.str, r.problems),
  };
}
