// The devnet's chain state and the database move together across restarts.
//
// Each devnet chain keeps its state in `<PURSER_DATA_DIR>/devnet/chain-<id>.json` (anvil loads it
// at start and writes it when it stops). The database records, per chain, the SHA-256 of the file
// written at the last clean stop and whether a process runs the chain now. A start compares the
// two: a file that is not the one the database expects (a process killed before its anvils could
// write their state, a file deleted or copied from elsewhere) stops the start with a message
// saying how to reset both, rather than run a ledger that books balances the chain does not have.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import type { DbExecutor } from '../core/db/database.ts';
import { devnetStateFile } from './anvil.ts';

interface ChainStateRow {
  chain_id: number;
  state_sha256: string | null;
  running: boolean;
}

export class DevnetStateMismatchError extends Error {
  constructor(reasons: string[], reset: string) {
    super(
      `The devnet's saved chain state does not match the database, so balances in the ledger could be ` +
        `missing on chain: ${reasons.join('; ')}. ${reset}`,
    );
    this.name = 'DevnetStateMismatchError';
  }
}

function fileDigest(path: string): string | null {
  if (!existsSync(path)) return null;
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

async function rows(db: DbExecutor, chainIds: number[]): Promise<Map<number, ChainStateRow>> {
  const result = await sql<ChainStateRow>`
    SELECT chain_id, state_sha256, running FROM devnet_chain_states
    WHERE chain_id IN (${sql.join(chainIds)})`.execute(db);
  return new Map(result.rows.map((r) => [Number(r.chain_id), r]));
}

export interface CheckDevnetStateOptions {
  db: DbExecutor;
  stateDir: string;
  chainIds: number[];
  /** Chains whose anvil, left running by a killed process, was stopped and wrote its latest state. */
  reclaimed: number[];
  /** How to reset the database and the chains together (ends the refusal message). */
  reset: string;
  log: (message: string) => void;
}

/**
 * Before the devnet starts: throws DevnetStateMismatchError when a chain's state file is not the
 * one the database expects. A chain the database has never recorded starts fresh (a state file
 * without its database, e.g. from before this database existed, is removed).
 */
export async function checkDevnetState(options: CheckDevnetStateOptions): Promise<void> {
  const { db, stateDir, chainIds, reclaimed, reset, log } = options;
  const recorded = await rows(db, chainIds);
  const reasons: string[] = [];
  for (const chainId of chainIds) {
    const path = devnetStateFile(stateDir, chainId);
    const row = recorded.get(chainId);
    if (!row) {
      if (existsSync(path)) {
        rmSync(path, { force: true });
        log(`devnet chain ${chainId}: the database has no record of ${path}; starting the chain fresh`);
      }
      continue;
    }
    if (row.running) {
      // Killed while running: the file is as old as the last state written, unless the anvil
      // itself outlived the process and wrote its latest state just now.
      if (!reclaimed.includes(chainId)) {
        reasons.push(
          `chain ${chainId} was not stopped cleanly last time (the process was killed), so ${path} may be older than the ledger`,
        );
      }
      continue;
    }
    const digest = fileDigest(path);
    if (digest !== row.state_sha256) {
      reasons.push(
        digest === null
          ? `chain ${chainId}'s state file ${path} is missing`
          : `chain ${chainId}'s state file ${path} is not the one written at the last stop`,
      );
    }
  }
  if (reasons.length > 0) throw new DevnetStateMismatchError(reasons, reset);
}

/** After the devnet started: the chains are running (a kill from now on shows at the next start). */
export async function markDevnetRunning(db: DbExecutor, chainIds: number[]): Promise<void> {
  for (const chainId of chainIds) {
    await sql`
      INSERT INTO devnet_chain_states (chain_id, state_sha256, running, updated_at)
      VALUES (${chainId}, NULL, true, now())
      ON CONFLICT (chain_id) DO UPDATE SET running = true, updated_at = now()`.execute(db);
  }
}

/** After the anvils stopped and wrote their state: records each state file as the expected one. */
export async function markDevnetStopped(db: DbExecutor, stateDir: string, chainIds: number[]): Promise<void> {
  for (const chainId of chainIds) {
    const digest = fileDigest(devnetStateFile(stateDir, chainId));
    await sql`
      INSERT INTO devnet_chain_states (chain_id, state_sha256, running, updated_at)
      VALUES (${chainId}, ${digest}, false, now())
      ON CONFLICT (chain_id) DO UPDATE
        SET state_sha256 = excluded.state_sha256, running = false, updated_at = now()`.execute(db);
  }
}

/** The devnet's state directory inside a data directory. */
export function devnetStateDir(dataDir: string): string {
  return resolve(dataDir, 'devnet');
}
