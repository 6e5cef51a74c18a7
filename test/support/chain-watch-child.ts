// The chain watcher in its own process, for the crash test:
// `node --import tsx chain-watch-child.ts <database url> <rpc url> <usdc address>`. It runs one
// watch of chain 8453 with the crash fault on: the process kills itself (SIGKILL) right after the
// first chunk of a range is committed, with the cursor still at the range's start.

import type { Address } from 'viem';
import { systemClock } from '../../src/core/clock.ts';
import { openPostgres } from '../../src/core/db/database.ts';
import { watchChain } from '../../src/modules/chainwatch/index.ts';
import { privateWatchDeps } from './chain-watch.ts';

const [url, rpcUrl, usdc] = process.argv.slice(2);
if (!url || !rpcUrl || !usdc) throw new Error('usage: chain-watch-child.ts <database url> <rpc url> <usdc>');

const handle = openPostgres(url, 2);
const anvil = { rpcUrl, chainId: 8453, rpc: async () => null, stop: async () => undefined };
const deps = privateWatchDeps(anvil, usdc as Address, handle.db, systemClock, { faultCrash: true });
const report = await watchChain(deps, 8453, { owner: 'doomed' });
process.stdout.write(`finished ${JSON.stringify(report)}\n`);
await handle.close();
