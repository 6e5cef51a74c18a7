// The chain watcher's routes: a wallet's holdings now (books and chain side by side), and the
// differences reconciliation found (docs/ledger.md, "Reconciliation and drift"). The operator's
// view and adjustments are under /v1/ops/ (modules/ops).

import { Type, type TSchema } from 'typebox';
import { unavailable } from '../../core/errors/app-error.ts';
import { requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import type { AppDeps } from '../../deps.ts';
import { listDrifts } from './drifts.ts';
import { walletHoldings } from './holdings.ts';
import type { WatchDeps } from './watcher.ts';

const TAGS = ['ledger'];
const ADDRESS = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Amount = Type.String({ pattern: '^-?[0-9]+$' });
export const DRIFT_LIST_DEFAULT_LIMIT = 50;
export const DRIFT_LIST_MAX_LIMIT = 200;

/** The watcher's dependencies from the application's; null without a chain port. */
export function chainWatchDeps(deps: AppDeps): WatchDeps | null {
  if (!deps.chain || !deps.tokenRegistry) return null;
  return {
    db: deps.db,
    clock: deps.clock,
    chain: deps.chain,
    registry: deps.tokenRegistry,
    config: deps.config,
    log: deps.log,
  };
}

/** The watcher's dependencies for a route: 503 without a chain port. */
function watchDepsOf(deps: AppDeps): WatchDeps {
  const watch = chainWatchDeps(deps);
  if (!watch) {
    throw unavailable('No chain is configured on this server.', {
      remediation: 'Set RPC_URL_<chain id> for the chains served (docs/operations.md).',
    });
  }
  return watch;
}

/** A page of drifts for a list query: the account's (or, for the operator, every account's). */
export function driftsPage(
  db: AppDeps['db'],
  accountId: string | null,
  query: { wallet?: string; state?: 'open' | 'resolved' | 'all'; limit?: number; cursor?: string },
) {
  return listDrifts(db, {
    accountId,
    wallet: query.wallet ?? null,
    state: query.state ?? 'open',
    limit: query.limit ?? DRIFT_LIST_DEFAULT_LIMIT,
    cursor: query.cursor ?? null,
  });
}

const Holding = Type.Object(
  {
    asset: Type.String({ description: 'CAIP-19 asset id, as the ledger names it.' }),
    symbol: Nullable(Type.String()),
    decimals: Nullable(Type.Integer()),
    ledger: Type.String({ description: "What the account's books hold, base units." }),
    chain: Type.String({ description: 'What the chain holds at `block`, base units.' }),
    unconfirmed: Type.String({ description: 'What the blocks after `block` changed, up to the head.' }),
  },
  { additionalProperties: false },
);

const HoldingsAnswer = Type.Object(
  {
    wallet: Type.String(),
    chains: Type.Array(
      Type.Object(
        {
          chain_id: Type.Integer(),
          block: Type.String({
            description: 'The latest confirmed block: the head less the confirmation depth.',
          }),
          head: Type.String(),
          watched_through: Nullable(Type.String({ description: 'The last block the chain watcher booked.' })),
          holdings: Type.Array(Holding),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'WalletHoldings' },
);

export const DriftSchema = Type.Object(
  {
    id: Type.String(),
    state: Type.Union([Type.Literal('suspected'), Type.Literal('open'), Type.Literal('resolved')]),
    chain_id: Type.Integer(),
    wallet: Type.String(),
    asset: Type.String(),
    ledger: Amount,
    chain: Amount,
    difference: Type.String({ description: 'chain − ledger: what an adjustment books into the wallet.' }),
    block: Type.String(),
    first_seen_at: Type.String({ format: 'date-time' }),
    raised_at: Nullable(Type.String({ format: 'date-time' })),
    resolved_at: Nullable(Type.String({ format: 'date-time' })),
    resolution: Nullable(Type.Union([Type.Literal('agreed'), Type.Literal('adjusted')])),
    reason: Nullable(Type.String()),
    adjustment_group_id: Nullable(Type.String()),
  },
  { additionalProperties: false, title: 'LedgerDrift' },
);

export const DriftList = Type.Object(
  { drifts: Type.Array(DriftSchema), next_cursor: Nullable(Type.String()) },
  { additionalProperties: false },
);

export const DriftListQuery = Type.Object(
  {
    wallet: Type.Optional(ADDRESS),
    state: Type.Optional(
      Type.Union([Type.Literal('open'), Type.Literal('resolved'), Type.Literal('all')], {
        description: 'open (the default): raised and not resolved; resolved; all (suspected ones too).',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DRIFT_LIST_MAX_LIMIT })),
    cursor: Type.Optional(
      Type.String({ pattern: '^drf_[0-9a-z]{1,64}$', description: 'The last id of the page before.' }),
    ),
  },
  { additionalProperties: false },
);

export const DRIFT_EXAMPLE = {
  id: 'drf_7k2m9x4q8w1n5c3v6b0z',
  state: 'open' as const,
  chain_id: 8453,
  wallet: '0x3e5e9111ae8eb78fe1cc3bb8915d5d461f3ef9a9',
  asset: 'eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  ledger: '980000000',
  chain: '985000000',
  difference: '5000000',
  block: '24418840',
  first_seen_at: '2026-03-02T09:00:00.000Z',
  raised_at: '2026-03-02T09:01:00.000Z',
  resolved_at: null,
  resolution: null,
  reason: null,
  adjustment_group_id: null,
};

export const chainwatchRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/wallets/{address}/balances',
    operationId: 'getWalletBalances',
    summary: "A wallet's holdings now: the account's books and the chain, per token",
    description:
      'For each chain where the account keeps books for the wallet (a policy names it), each registry token ' +
      'and the native coin (balance plus EntryPoint deposit): the books (`ledger`), the chain at the latest ' +
      'confirmed block (`chain`, `block`), what the blocks since changed (`unconfirmed`), and how far the ' +
      'chain watcher has booked (`watched_through`). Once the watcher has passed `block`, `ledger` equals ' +
      '`chain`; a difference that stays is a drift (GET /v1/ledger/drifts). docs/ledger.md.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'params', field: 'address' },
    schema: {
      params: Type.Object({ address: ADDRESS }, { additionalProperties: false }),
      querystring: Type.Object(
        { chain_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Only this chain.' })) },
        { additionalProperties: false },
      ),
      response: { 200: HoldingsAnswer },
    },
    docs: {
      errors: [
        { code: 'NOT_FOUND', when: 'the account keeps no books for the wallet (on that chain)' },
        { code: 'UNAVAILABLE', when: 'the chain did not answer (nothing changed; retry)' },
      ],
      responses: { 200: 'The holdings per chain and token.' },
      example: {
        params: { address: DRIFT_EXAMPLE.wallet },
        query: { chain_id: 8453 },
        status: 200,
        response: {
          wallet: DRIFT_EXAMPLE.wallet,
          chains: [
            {
              chain_id: 8453,
              block: '24418840',
              head: '24418852',
              watched_through: '24418840',
              holdings: [
                {
                  asset: DRIFT_EXAMPLE.asset,
                  symbol: 'USDC',
                  decimals: 6,
                  ledger: '980000000',
                  chain: '980000000',
                  unconfirmed: '0',
                },
              ],
            },
          ],
        },
      },
    },
    handler: async (ctx) => ({
      status: 200,
      body: await walletHoldings(
        watchDepsOf(ctx.deps),
        requirePrincipal(ctx).accountId,
        ctx.params.address,
        ctx.query.chain_id ?? null,
      ),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/ledger/drifts',
    operationId: 'listLedgerDrifts',
    summary: "Differences between the account's books and the chain that nothing explains, newest first",
    description:
      'Reconciliation compares, for every watched wallet and token, the books with the chain at the last block ' +
      'the chain watcher passed. A difference still there a grace period later is raised (`ledger.drift`) and ' +
      'listed here as `open` until the books agree with the chain again or an operator books an adjustment ' +
      'with a reason (`resolved`). docs/ledger.md, "Reconciliation and drift".',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'query', field: 'wallet' },
    schema: { querystring: DriftListQuery, response: { 200: DriftList } },
    docs: {
      errors: [],
      responses: { 200: 'A page of drifts and the cursor of the next one (null at the end).' },
      example: {
        query: { state: 'open' },
        status: 200,
        response: { drifts: [DRIFT_EXAMPLE], next_cursor: null },
      },
    },
    handler: async (ctx) => ({
      status: 200,
      body: await driftsPage(ctx.deps.db, requirePrincipal(ctx).accountId, ctx.query),
    }),
  }),
];
