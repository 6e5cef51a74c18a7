// What a rebalance run needs (RebalanceRunDeps), and what every step of it looks up: the CCTP
// contracts of a chain, the registry's USDC, the bridge leg of a rebalance, the executor's signer,
// the rebalance as it is now, and the crash points of the fault-injection tests.

import { getAddress, type Address } from 'viem';
import type { AttestationPort } from '../../adapters/attestation/port.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { CctpChain, Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../core/db/database.ts';
import type { TokenRegistry } from '../registry/index.ts';
import type { BridgeLeg } from './ledger.ts';
import { findRebalance, type RebalanceRow } from './store.ts';
import { executorAccount } from './transactions.ts';

export interface RebalanceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RebalanceRunDeps {
  config: Config;
  clock: Clock;
  db: Db;
  chain: ChainPort;
  registry: TokenRegistry;
  attestation: AttestationPort;
  log: RebalanceLog;
}

/** Gas limits: generous (only what is used is paid); the burn cannot be estimated before its approve lands. */
export const GAS = { approve: 120_000n, burn: 400_000n, mint: 500_000n } as const;

/** The CCTP contracts configured for a chain. */
export function cctpOf(config: Config, chainId: number): CctpChain {
  const c = config.cctp.chains[chainId];
  if (!c) throw new Error(`chain ${chainId} has no CCTP contracts configured`);
  return c;
}

/** The registry's USDC on a chain. */
export function usdcOf(registry: TokenRegistry, chainId: number): Address {
  const t = registry.findToken(chainId, 'USDC');
  if (!t) throw new Error(`the registry has no USDC on chain ${chainId}`);
  return getAddress(t.address);
}

/** The bridge leg of a rebalance, as its ledger entries name it. */
export function legOf(deps: RebalanceRunDeps, row: RebalanceRow): BridgeLeg {
  return {
    fromChainId: row.from_chain_id,
    toChainId: row.to_chain_id,
    wallet: row.wallet,
    fromUsdc: usdcOf(deps.registry, row.from_chain_id).toLowerCase(),
    toUsdc: usdcOf(deps.registry, row.to_chain_id).toLowerCase(),
  };
}

/** The executor's account, which signs every transaction of a rebalance. */
export function signer(config: Config) {
  if (!config.executorPrivateKey) throw new Error('no executor key is configured');
  return executorAccount(config.executorPrivateKey);
}

export const crash = (deps: RebalanceRunDeps, at: NonNullable<Config['cctp']['faultCrash']>) => {
  // Fault injection for the crash tests (never in production): die right here.
  if (deps.config.cctp.faultCrash === at) process.kill(process.pid, 'SIGKILL');
};

/** The rebalance as it is now (it cannot vanish while it runs). */
export async function reload(deps: RebalanceRunDeps, id: string): Promise<RebalanceRow> {
  const row = await findRebalance(deps.db, id, null);
  if (!row) throw new Error(`rebalance ${id} vanished`);
  return row;
}
