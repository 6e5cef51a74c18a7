// `purser ops …`: the operator controls on the command line (the same settings /v1/ops/ changes).
// When a running server holds the embedded database, the command goes to that server's /v1/ops/
// (development: see dev-operator.ts); otherwise to the configured database (ops-direct.ts, loaded
// only then). Every change is an audit fact by `operator`.

import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { embeddedDatabaseHolder, readDevOperatorAccess, type DevOperatorAccess } from './dev-operator.ts';
import {
  adjustArgs,
  driftState,
  FEATURE_REQUEST_STATUSES,
  OPS_USAGE,
  switchArgs,
  usdOrDefault,
  UsageError,
} from './ops-args.ts';

export { OPS_USAGE };

/** Runs one `purser ops` command; exit code 0, or 64 on a usage error. */
export async function runOps(config: Config, log: Logger, args: string[]): Promise<number> {
  const holder = config.databaseUrl === null ? embeddedDatabaseHolder(config.dataDir) : null;
  if (holder !== null) {
    // A running server holds the embedded database: ask it over its operator surface.
    const access =
      (config.env === 'development' ? readDevOperatorAccess(config.dataDir, holder) : null) ??
      (config.operatorToken ? { url: config.publicUrl, token: config.operatorToken, pid: holder } : null);
    if (!access) {
      console.error(
        `The embedded database in ${config.dataDir} is in use by a running Purser (pid ${holder}) that ` +
          'offers no operator access to this command. Start it with `purser serve` in development ' +
          'without PURSER_OPERATOR_TOKEN (it then writes its operator access to the data directory), ' +
          'or set PURSER_OPERATOR_TOKEN (and PURSER_PUBLIC_URL) to the values the server runs with.',
      );
      return 69; // EX_UNAVAILABLE
    }
    return runOpsOverHttp(access, args);
  }
  const { runOpsDirect } = await import('./ops-direct.ts');
  return runOpsDirect(config, log, args);
}

// ------------------------------------------------------------------------------ over HTTP

interface HttpCall {
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  body?: unknown;
}

/** The /v1/ops/ request of each command (validated here first, so a usage error sends nothing). */
function httpCallFor(args: string[]): { call: HttpCall; thenBilling: boolean; print: 'json' | 'switches' } {
  const [command, a, b] = args;
  const billing = (body: unknown) => ({
    call: { method: 'PUT' as const, path: '/v1/ops/billing', body },
    thenBilling: false,
    print: 'json' as const,
  });
  const usd = (v: string | undefined) => {
    usdOrDefault(v);
    return v === 'default' ? null : (v ?? null);
  };
  switch (command) {
    case 'billing':
      return { call: { method: 'GET', path: '/v1/ops/billing' }, thenBilling: false, print: 'json' };
    case 'switches':
      return { call: { method: 'GET', path: '/v1/ops/switches' }, thenBilling: false, print: 'switches' };
    case 'metering':
      if (a !== 'on' && a !== 'off' && a !== 'default')
        throw new UsageError('metering takes on, off or default');
      return billing({ metering_enforced: a === 'default' ? null : a === 'on' });
    case 'float-cap':
      return billing({ prepaid_float_cap_usd: usd(a) });
    case 'account-cap-default':
      return billing({ prepaid_account_cap_default_usd: usd(a) });
    case 'account-cap': {
      if (!a) throw new UsageError('account-cap needs an account id or address');
      const cap = usd(b);
      return {
        call: {
          method: 'PUT',
          path: `/v1/ops/accounts/${encodeURIComponent(a)}/prepaid-cap`,
          body: { cap_usd: cap },
        },
        thenBilling: true,
        print: 'json',
      };
    }
    case 'switch': {
      const { enabled, scope, target, reason } = switchArgs(args.slice(1));
      return {
        call: {
          method: 'PUT',
          path: '/v1/ops/switches',
          body: {
            scope,
            enabled,
            ...(target ? { target } : {}),
            ...(reason ? { reason } : {}),
          },
        },
        thenBilling: false,
        print: 'json',
      };
    }
    case 'drifts':
      return {
        call: { method: 'GET', path: `/v1/ops/drifts?state=${driftState(a)}&limit=200` },
        thenBilling: false,
        print: 'json',
      };
    case 'adjust': {
      const { id, reason } = adjustArgs(args);
      return {
        call: { method: 'POST', path: `/v1/ops/drifts/${encodeURIComponent(id)}/adjust`, body: { reason } },
        thenBilling: false,
        print: 'json',
      };
    }
    case 'feature-request':
      if (!a) throw new UsageError('feature-request needs an id');
      if (!b || !(FEATURE_REQUEST_STATUSES as readonly string[]).includes(b))
        throw new UsageError(`feature-request needs a status: one of ${FEATURE_REQUEST_STATUSES.join(', ')}`);
      return {
        call: {
          method: 'PUT',
          path: `/v1/ops/feature-requests/${encodeURIComponent(a)}`,
          body: { status: b },
        },
        thenBilling: false,
        print: 'json',
      };
    default:
      throw new UsageError(command ? `unknown ops command: ${command}` : 'an ops command is needed');
  }
}

async function send(access: DevOperatorAccess, call: HttpCall): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(call.path, access.url), {
    method: call.method,
    headers: {
      authorization: `Bearer ${access.token}`,
      ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: shown as it is
  }
  return { status: res.status, body };
}

/** Runs one `purser ops` command against the running server's /v1/ops/. */
async function runOpsOverHttp(access: DevOperatorAccess, args: string[]): Promise<number> {
  let plan: ReturnType<typeof httpCallFor>;
  try {
    plan = httpCallFor(args);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${OPS_USAGE}`);
      return 64;
    }
    throw err;
  }
  let answer: { status: number; body: unknown };
  try {
    answer = await send(access, plan.call);
  } catch (err) {
    console.error(
      `The running Purser (pid ${access.pid}) holds the embedded database, but ${access.url} did not answer: ` +
        `${err instanceof Error ? err.message : String(err)}.`,
    );
    return 69;
  }
  if (answer.status >= 400) {
    const e = answer.body as { code?: string; message?: string };
    console.error(
      typeof e === 'object' && e !== null && e.code
        ? `${e.code}: ${e.message ?? ''}`
        : `HTTP ${answer.status}`,
    );
    return answer.status < 500 ? 64 : 1;
  }
  if (plan.print === 'switches') {
    const { switches } = answer.body as { switches: unknown };
    console.log(JSON.stringify({ switches }, null, 2));
    return 0;
  }
  console.log(JSON.stringify(answer.body, null, 2));
  if (plan.thenBilling) {
    const overview = await send(access, { method: 'GET', path: '/v1/ops/billing' });
    console.log(JSON.stringify(overview.body, null, 2));
  }
  return 0;
}
