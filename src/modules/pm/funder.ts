// Which Safe funds an owner (docs/prediction-markets.md, "Finding the funder"): the owner's Safes
// from the Safe Transaction Service, each read on chain (grants set, pUSD), the likeliest first:
// most of the six grants set, then most pUSD, then the address (a stable order).

import { getAddress, type Address } from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { SafeTxServicePort } from '../../adapters/safe/tx-service.ts';
import type { PmContracts } from '../../config.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { grantsSet, readGrants } from './onboarding.ts';

/** The part of the Safe Transaction Service the lookup uses. */
export type SafeIndex = Pick<SafeTxServicePort, 'safesOfOwner'>;

export interface FunderCandidate {
  address: Address;
  /** How many of Polymarket's six grants the Safe has set. */
  grants_set: number;
  trade_ready: boolean;
  /** pUSD and unwrapped USDC.e, base units. */
  pusd: string;
  usdce_unwrapped: string;
}

export interface FunderLookup {
  owner: Address;
  funder: Address | null;
  candidates: FunderCandidate[];
}

/** Most Safes read on chain per lookup; an owner of more gets the first ones the service lists. */
export const FUNDER_CANDIDATES_MAX = 20;

export async function lookupFunder(
  index: SafeIndex,
  chain: ChainPort,
  chainId: number,
  contracts: PmContracts,
  ownerRaw: string,
  deadline: Deadline,
): Promise<FunderLookup> {
  const owner = getAddress(ownerRaw);
  deadline.check('asking the Safe Transaction Service');
  let safes: Address[];
  try {
    safes = await index.safesOfOwner(chainId, owner);
  } catch (err) {
    throw unavailable(`The Safe Transaction Service did not answer: ${(err as Error).message}`, {
      remediation: 'Retry in a minute.',
      next: [],
    });
  }
  const unique = [...new Set(safes.map((s) => getAddress(s)))].slice(0, FUNDER_CANDIDATES_MAX);
  const candidates = await Promise.all(
    unique.map(async (address): Promise<FunderCandidate & { pusdValue: bigint }> => {
      const r = await readGrants(chain, chainId, contracts, address, deadline);
      const set = grantsSet(r);
      return {
        address,
        grants_set: set,
        trade_ready: set === 6,
        pusd: r.pusd.toString(),
        usdce_unwrapped: r.usdce.toString(),
        pusdValue: r.pusd,
      };
    }),
  );
  candidates.sort(
    (a, b) =>
      b.grants_set - a.grants_set ||
      (b.pusdValue > a.pusdValue ? 1 : b.pusdValue < a.pusdValue ? -1 : 0) ||
      a.address.localeCompare(b.address),
  );
  return {
    owner,
    funder: candidates[0]?.address ?? null,
    candidates: candidates.map(({ pusdValue: _, ...c }) => c),
  };
}
