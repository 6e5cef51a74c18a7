// Where the devnet's services stand in for the real ones in development, unless the operator's
// settings say otherwise.

import type { CctpConfig, Config, PmConfig, PriceFeedConfig, VenuesConfig } from '../config.ts';
import { withDevnetKernelModules } from './kernel-accounts.ts';
import { devnetBundlerUrls, devnetRpcUrls, devnetTokenAddresses, type DevnetInfo } from './devnet.ts';

/**
 * The configuration a running devnet implies: its chains, bundlers, contracts, feeds, venues and
 * fakes wherever the operator's settings did not point elsewhere. What the rest of the service
 * reads; nothing else there knows a devnet exists.
 */
export function devnetConfig(config: Config, devnet: DevnetInfo): Config {
  // Chains the operator pointed elsewhere (RPC_URL_<id>) keep their RPC URL and their bundler (a
  // devnet bundler would simulate against the wrong chain); the rest use the devnet's.
  const onDevnet = (chainId: number) => chainId in devnet.chains && config.rpcUrls[chainId] === undefined;
  const devnetBundlers = Object.entries(devnetBundlerUrls(devnet)).filter(([id]) => onDevnet(Number(id)));
  return {
    ...config,
    rpcUrls: { ...devnetRpcUrls(devnet), ...config.rpcUrls },
    bundlerUrls: { ...Object.fromEntries(devnetBundlers), ...config.bundlerUrls },
    kernel: {
      ...config.kernel,
      modules: withDevnetKernelModules(config.kernel.modules, config.kernel.configuredChains, devnet),
    },
    cctp: withDevnetCctp(config.cctp, devnet),
    pm: withDevnetPmVenues(config.pm, devnet),
    venues: withDevnetVenues(config.venues, devnet),
    prices: withDevnetPriceFeeds(config.prices, devnet, onDevnet),
    devnet: { ...config.devnet, tokenAddresses: devnetTokenAddresses(devnet) },
  };
}

/**
 * The devnet's venues: on each of its chains its own Uniswap v3 and Aerodrome stand-ins (a chain
 * without them offers neither: the real deployments hold nothing there), its constant-product AMM
 * (`devnet-amm`), and the aggregator fakes in place of the vendors' APIs.
 */
export function withDevnetVenues(venues: VenuesConfig, devnet: DevnetInfo): VenuesConfig {
  const uniswapV3 = { ...venues.uniswapV3 };
  const aerodrome = { ...venues.aerodrome };
  const devnetAmm: VenuesConfig['devnetAmm'] = {};
  for (const c of Object.values(devnet.chains)) {
    const k = c.contracts;
    delete uniswapV3[c.chainId];
    delete aerodrome[c.chainId];
    if (k.uniswapV3QuoterV2 && k.uniswapV3SwapRouter02) {
      uniswapV3[c.chainId] = { quoterV2: k.uniswapV3QuoterV2, swapRouter02: k.uniswapV3SwapRouter02 };
    }
    if (k.aerodromeRouter && k.aerodromePoolFactory) {
      aerodrome[c.chainId] = { router: k.aerodromeRouter, poolFactory: k.aerodromePoolFactory };
    }
    if (k.uniswapV2Router02) devnetAmm[c.chainId] = { router02: k.uniswapV2Router02 };
  }
  const fakes = devnet.aggregators;
  if (!fakes) return { ...venues, uniswapV3, aerodrome, devnetAmm };
  // The fakes quote and swap on each chain's Uniswap v2 Router02: their spender and router.
  const aggregatorContracts: VenuesConfig['aggregatorContracts'] = {};
  for (const id of fakes.chainIds) {
    const router = devnet.chains[id]?.contracts.uniswapV2Router02;
    if (router) aggregatorContracts[id] = router;
  }
  return {
    ...venues,
    uniswapV3,
    aerodrome,
    devnetAmm,
    aggregatorChainIds: [...fakes.chainIds],
    aggregatorContracts,
    zeroEx: { ...venues.zeroEx, baseUrl: fakes.zeroExBaseUrl, apiKey: fakes.zeroExApiKey },
    kyberswap: { ...venues.kyberswap, baseUrl: fakes.kyberswapBaseUrl },
  };
}

/**
 * The devnet's price feeds: a chain the devnet serves reads its DevPriceFeed contracts only (the
 * real addresses hold nothing there), with `devnetHeartbeatSeconds` since nothing posts heartbeat
 * rounds, and has no sequencer uptime feed; other chains keep the configured ones.
 */
export function withDevnetPriceFeeds(
  prices: Config['prices'],
  devnet: DevnetInfo,
  onDevnet: (chainId: number) => boolean,
): Config['prices'] {
  const feeds: Record<number, Record<string, PriceFeedConfig>> = {};
  for (const [chain, byPair] of Object.entries(prices.feeds)) {
    if (!onDevnet(Number(chain))) feeds[Number(chain)] = byPair;
  }
  for (const c of Object.values(devnet.chains)) {
    if (!onDevnet(c.chainId)) continue;
    const byPair: Record<string, PriceFeedConfig> = {};
    for (const [pair, address] of Object.entries(c.priceFeeds)) {
      byPair[pair] = { address, heartbeatSeconds: prices.devnetHeartbeatSeconds };
    }
    if (Object.keys(byPair).length > 0) feeds[c.chainId] = byPair;
  }
  const sequencers = Object.fromEntries(
    Object.entries(prices.sequencers).filter(([chain]) => !onDevnet(Number(chain))),
  );
  return { ...prices, feeds, sequencers };
}

/**
 * The devnet's CCTP V2: its contracts on each corridor chain and its attestation service, unless
 * CCTP_CONTRACTS / CCTP_ATTESTATION_URL say otherwise.
 */
export function withDevnetCctp(cctp: CctpConfig, devnet: DevnetInfo): CctpConfig {
  const out: CctpConfig = { ...cctp };
  if (!cctp.chainsConfigured && devnet.attestation) {
    const chains: CctpConfig['chains'] = {};
    for (const [id, domain] of Object.entries(devnet.attestation.domains)) {
      const contracts = devnet.chains[Number(id)]?.contracts;
      if (!contracts?.cctpTokenMessenger || !contracts.cctpMessageTransmitter) continue;
      chains[Number(id)] = {
        domain,
        tokenMessenger: contracts.cctpTokenMessenger,
        messageTransmitter: contracts.cctpMessageTransmitter,
      };
    }
    out.chains = chains;
  }
  if (!cctp.attestationUrlConfigured && devnet.attestation)
    out.attestationUrl = devnet.attestation.irisBaseUrl;
  return out;
}

/**
 * Where the devnet's prediction-market venues stand in for Polymarket's CLOB and Kalshi, its
 * contracts for Polymarket's and its Safe Transaction Service for Safe's, unless
 * POLYMARKET_CLOB_URL, KALSHI_API_URL, PM_CONTRACTS or SAFE_TX_SERVICE_URL say otherwise.
 */
export function withDevnetPmVenues(pm: PmConfig, devnet: DevnetInfo): PmConfig {
  const out: PmConfig = { ...pm };
  const polygon = devnet.chains[pm.chainId];
  const clob = polygon?.polymarket;
  if (!pm.polymarketClobUrlConfigured && clob) out.polymarketClobUrl = clob.clobUrl;
  if (!pm.contractsConfigured && clob?.contracts) {
    const { offramp: _, ...contracts } = clob.contracts;
    // Lower case, as PM_CONTRACTS is read.
    out.contracts = Object.fromEntries(
      Object.entries(contracts).map(([k, v]) => [k, v.toLowerCase()]),
    ) as unknown as PmConfig['contracts'];
  }
  if (!pm.safeTxServiceUrlConfigured && polygon?.safeTxServiceUrl)
    out.safeTxServiceUrl = polygon.safeTxServiceUrl;
  if (!pm.kalshiApiUrlConfigured && devnet.kalshi) out.kalshiApiUrl = devnet.kalshi.apiUrl;
  return out;
}
