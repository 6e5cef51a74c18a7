// The trading settings: the sanctions list screening reads, the token-conversion venues, the
// slicing planner and the prediction markets (venues, contracts, geography, rate lanes). Read by
// loadConfig (src/config.ts).

import { countryList, parsePmContracts, pmFaultCrash, pmRateLanes } from '../parse.ts';
import type { EnvReader } from '../reader.ts';
import { type Config, BASE_VENUE_DEPLOYMENTS } from '../settings.ts';

/** Where `purser screening sync` downloads the SDN XML from. */
export function readScreening(r: EnvReader): Config['screening'] {
  return {
    sdnUrl:
      r.str('SDN_XML_URL') ??
      'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.XML',
  };
}

/** The conversion venues: the on-chain deployments on Base and the aggregators' HTTP APIs. */
export function readVenues(r: EnvReader): Config['venues'] {
  return {
    timeoutMs: r.int('VENUE_TIMEOUT_MS', 4_000, 50, 60_000),
    onchainQuoteTtlMs: r.int('ONCHAIN_QUOTE_TTL_MS', 15_000, 1_000, 600_000),
    uniswapV3: { 8453: { ...BASE_VENUE_DEPLOYMENTS.uniswapV3 } },
    aerodrome: { 8453: { ...BASE_VENUE_DEPLOYMENTS.aerodrome } },
    devnetAmm: {},
    aggregatorChainIds: [8453],
    aggregatorContracts: {},
    zeroEx: {
      baseUrl: r.baseUrl('ZEROX_BASE_URL', 'https://api.0x.org'),
      apiKey: r.str('ZEROX_API_KEY') ?? null,
      timeoutMs: r.int('ZEROX_TIMEOUT_MS', 4_000, 100, 60_000),
      quoteTtlMs: r.int('ZEROX_QUOTE_TTL_SECONDS', 30, 1, 600) * 1000,
    },
    kyberswap: {
      baseUrl: r.baseUrl('KYBERSWAP_BASE_URL', 'https://aggregator-api.kyberswap.com'),
      clientId: r.str('KYBERSWAP_CLIENT_ID') ?? null,
      timeoutMs: r.int('KYBERSWAP_TIMEOUT_MS', 4_000, 100, 60_000),
      quoteTtlMs: r.int('KYBERSWAP_QUOTE_TTL_SECONDS', 10, 1, 600) * 1000,
    },
  };
}

/** The slicing planner: how many slices an order may be cut into, and the time between two. */
export function readPlanner(r: EnvReader): Config['planner'] {
  return {
    maxSlices: r.int('PLANNER_MAX_SLICES', 20, 1, 200),
    sliceIntervalMs: r.int('PLANNER_SLICE_INTERVAL_MS', 4_000, 0, 600_000),
  };
}

/** Prediction markets: Polymarket and Kalshi, the Safe service, geography, rate lanes, the watch. */
export function readPm(r: EnvReader, production: boolean): Config['pm'] {
  return {
    polymarketClobUrl: r.baseUrl('POLYMARKET_CLOB_URL', 'https://clob.polymarket.com'),
    polymarketClobUrlConfigured: r.str('POLYMARKET_CLOB_URL') !== undefined,
    kalshiApiUrl: r.baseUrl('KALSHI_API_URL', 'https://api.elections.kalshi.com/trade-api/v2'),
    kalshiApiUrlConfigured: r.str('KALSHI_API_URL') !== undefined,
    venueTimeoutMs: r.int('PM_VENUE_TIMEOUT_MS', 5_000, 100, 60_000),
    chainId: 137,
    contracts: parsePmContracts(r.str('PM_CONTRACTS'), r.problems),
    contractsConfigured: r.str('PM_CONTRACTS') !== undefined,
    safeTxServiceUrl: r.baseUrl('SAFE_TX_SERVICE_URL', 'https://api.safe.global/tx-service/pol'),
    safeTxServiceUrlConfigured: r.str('SAFE_TX_SERVICE_URL') !== undefined,
    safeTxServiceApiKey: r.str('SAFE_TX_SERVICE_API_KEY') ?? null,
    geo: {
      restrictedCountries: countryList(r.str('PM_RESTRICTED_COUNTRIES'), r.problems),
      trustedProxies: (r.str('PM_GEO_TRUSTED_PROXIES') ?? '')
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== ''),
      countryHeader: (r.str('PM_GEO_COUNTRY_HEADER') ?? 'cf-ipcountry').toLowerCase(),
      maxmindDbPath: r.str('PM_GEO_MAXMIND_DB') ?? null,
      allowLoopback: r.bool('PM_GEO_ALLOW_LOOPBACK', !production),
    },
    rateLanes: pmRateLanes(r.str('PM_RATE_LANES'), r.problems),
    faultCrash: production ? null : pmFaultCrash(r.str('PURSER_FAULT_PM_ORDER_CRASH'), r.problems),
    watch: {
      burstMinPerMinute: r.int('PM_CREDENTIAL_BURST_MIN_PER_MINUTE', 60, 1, 1_000_000),
      burstFactor: r.int('PM_CREDENTIAL_BURST_FACTOR', 10, 1, 1_000_000),
    },
  };
}
