// `purser ops …` against the configured database, when no running server holds it (ops.ts
// decides): every change is an audit fact by `operator`, and a switch changed here reaches the
// running service processes within two seconds (their cache). Loaded only for this path: it
// brings the service's modules and the database.

import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { systemClock } from '../core/clock.ts';
import { withTransaction, type Db } from '../core/db/database.ts';
import { AppError } from '../core/errors/app-error.ts';
import { findAccountByAddress, findAccountById } from '../modules/account/index.ts';
import { recordAudit } from '../modules/audit/index.ts';
import {
  billingOverview,
  setAccountPrepaidCap,
  setMeteringEnforced,
  setPrepaidCap,
} from '../modules/billing/index.ts';
import { adjustDrift, listDrifts } from '../modules/chainwatch/index.ts';
import { type FeatureRequestStatus } from '../modules/feedback/index.ts';
import { setFeatureRequestStatus } from '../modules/feedback/service.ts';
import { buildTokenRegistry } from '../modules/registry/index.ts';
import { listSwitches, setSwitch } from '../modules/switches/index.ts';
import { openAndMigrate } from '../runtime.ts';
import {
  adjustArgs,
  driftState,
  FEATURE_REQUEST_STATUSES,
  OPS_USAGE,
  switchArgs,
  usdOrDefault,
  UsageError,
} from './ops-args.ts';

async function audit(db: Db, accountId: string | null, action: string, details: Record<string, unknown>) {
  await recordAudit(db, systemClock, { accountId, actor: 'operator', action, details, network: null });
}

/** `switch on|off <scope> [target] [reason]`: prints the switch's state. */
async function runSwitch(db: Db, args: string[]): Promise<void> {
  const checked = switchArgs(args);
  const { scope, enabled, reason } = checked;
  let target = checked.target;
  if (scope === 'account' && target && /^0x[0-9a-fA-F]{40}$/.test(target)) {
    const account = await findAccountByAddress(db, target.toLowerCase());
    if (!account) throw new UsageError(`no account ${target}`);
    target = account.id;
  }
  const state = await withTransaction(db, (tx) =>
    setSwitch(
      tx,
      systemClock,
      {
        scope,
        target,
        enabled,
        reason,
      },
      null,
    ),
  );
  console.log(JSON.stringify(state, null, 2));
}

async function runFeatureRequest(db: Db, id: string | undefined, status: string | undefined) {
  if (!id) throw new UsageError('feature-request needs an id');
  if (!status || !(FEATURE_REQUEST_STATUSES as readonly string[]).includes(status))
    throw new UsageError(`feature-request needs a status: one of ${FEATURE_REQUEST_STATUSES.join(', ')}`);
  const changed = await withTransaction(db, (tx) =>
    setFeatureRequestStatus(tx, systemClock, id, status as FeatureRequestStatus, null),
  );
  console.log(`Feature request ${changed.id}: ${changed.previousStatus} -> ${changed.status}.`);
}

async function run(db: Db, config: Config, args: string[]): Promise<void> {
  const [command, a, b] = args;
  const now = systemClock.now();
  switch (command) {
    case 'switches':
      console.log(JSON.stringify({ switches: await listSwitches(db) }, null, 2));
      return;
    case 'switch':
      return runSwitch(db, args.slice(1));
    case 'feature-request':
      return runFeatureRequest(db, a, b);
    case 'drifts': {
      const state = driftState(a);
      console.log(
        JSON.stringify(
          await listDrifts(db, { accountId: null, wallet: null, state, limit: 200, cursor: null }),
          null,
          2,
        ),
      );
      return;
    }
    case 'adjust': {
      const { id, reason } = adjustArgs(args);
      const drift = await withTransaction(db, (tx) =>
        adjustDrift(tx, systemClock, {
          driftId: id,
          reason,
          actor: 'operator',
          network: null,
          registry: buildTokenRegistry(config.env, config.devnet.tokenAddresses ?? undefined),
        }),
      );
      console.log(JSON.stringify(drift, null, 2));
      return;
    }
    case 'billing':
      break;
    case 'metering': {
      if (a !== 'on' && a !== 'off' && a !== 'default')
        throw new UsageError('metering takes on, off or default');
      const enforced = a === 'default' ? null : a === 'on';
      await setMeteringEnforced(db, enforced, 'operator', now);
      await audit(db, null, 'ops.billing_settings', { metering_enforced: enforced });
      break;
    }
    case 'float-cap':
    case 'account-cap-default': {
      const cap = usdOrDefault(a);
      await setPrepaidCap(db, command === 'float-cap' ? 'float' : 'account_default', cap, 'operator', now);
      await audit(db, null, 'ops.billing_settings', { [command]: a });
      break;
    }
    case 'account-cap': {
      if (!a) throw new UsageError('account-cap needs an account id or address');
      const account = /^0x[0-9a-fA-F]{40}$/.test(a)
        ? await findAccountByAddress(db, a.toLowerCase())
        : await findAccountById(db, a);
      if (!account) throw new UsageError(`no account ${a}`);
      const cap = usdOrDefault(b);
      await setAccountPrepaidCap(db, account.id, cap, 'operator', now);
      await audit(db, account.id, 'ops.prepaid_cap', { cap_usd: b });
      console.log(
        `Account ${account.id}: prepaid cap ${b === 'default' ? 'back to the default' : `${b} USD`}.`,
      );
      break;
    }
    default:
      throw new UsageError(command ? `unknown ops command: ${command}` : 'an ops command is needed');
  }
  console.log(JSON.stringify(await billingOverview(db, config), null, 2));
}

/** Runs one `purser ops` command on the database; exit code 0, or 64 on a usage error. */
export async function runOpsDirect(config: Config, log: Logger, args: string[]): Promise<number> {
  const handle = await openAndMigrate(config, log);
  try {
    await run(handle.db, config, args);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${OPS_USAGE}`);
      return 64;
    }
    if (
      err instanceof AppError &&
      (err.code === 'INVALID_REQUEST' || err.code === 'NOT_FOUND' || err.code === 'CONFLICT')
    ) {
      console.error(`${err.message}\n\n${OPS_USAGE}`);
      return 64;
    }
    throw err;
  } finally {
    await handle.close();
  }
}
