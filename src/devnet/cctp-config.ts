// Where the devnet's CCTP V2 stands in for Circle's: its contracts on each corridor chain and its
// attestation service, unless CCTP_CONTRACTS / CCTP_ATTESTATION_URL say otherwise.

import type { CctpConfig } from '../config.ts';
import type { DevnetInfo } from './devnet.ts';

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
