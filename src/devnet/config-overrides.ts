// Where the devnet's services stand in for the real ones in development, unless the operator's
// settings say otherwise.

import type { CctpConfig, PmConfig } from '../config.ts';
import type { DevnetInfo } from './devnet.ts';

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
