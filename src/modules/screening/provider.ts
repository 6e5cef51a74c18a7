// The screening port. The stored OFAC SDN list is always one provider; others (a commercial
// screening API, another government list) implement the same interface, live in
// `src/adapters/screening/`, and are passed in as `deps.screeningProviders`.

import type { DbExecutor } from '../../core/db/database.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { lookupListed } from './store.ts';

export const SDN_LIST = 'OFAC SDN';

export interface ScreenOptions {
  /** The request's time budget: check it before calling a third party. */
  deadline?: Deadline;
}

export interface ScreeningProvider {
  /** A short name for logs (`ofac-sdn`, …). */
  readonly name: string;
  /**
   * The names of the lists on which the address appears (as shown in `lists`); empty when none.
   * Throws when it cannot answer (unreachable, list not loaded): screening fails closed, a
   * provider never answers "not listed" for "don't know".
   */
  screen(address: `0x${string}`, options?: ScreenOptions): Promise<string[]>;
}

/**
 * How listed addresses are stored and compared: EVM addresses lowercased (their case is only a
 * checksum), every other format as published (base58 is case-sensitive).
 */
export function normalizeListedAddress(address: string): string {
  const trimmed = address.trim();
  return /^0x[0-9a-fA-F]{40}$/.test(trimmed) ? trimmed.toLowerCase() : trimmed;
}

/**
 * The OFAC SDN list's digital-currency addresses as last stored by `syncSdnList`.
 * Throws UNAVAILABLE while the list has never been loaded.
 */
export function sdnListProvider(
  db: DbExecutor,
  /** Development: loads the bundled fixture when no list was ever stored, then asks again. */
  seedIfEmpty?: () => Promise<unknown>,
): ScreeningProvider {
  return {
    name: 'ofac-sdn',
    screen: async (address) => {
      const normalized = normalizeListedAddress(address);
      let { loaded, listed } = await lookupListed(db, SDN_LIST, normalized);
      if (!loaded && seedIfEmpty) {
        await seedIfEmpty();
        ({ loaded, listed } = await lookupListed(db, SDN_LIST, normalized));
      }
      if (listed) return [SDN_LIST];
      if (!loaded) {
        throw unavailable('The OFAC SDN list has not been loaded yet, so no screening answer can be given.', {
          remediation: 'Retry later; the operator must run `purser screening sync` once.',
        });
      }
      return [];
    },
  };
}
