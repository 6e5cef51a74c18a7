import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import { QuoteComparisonSchema, QuoteRequestSchema } from './schemas.ts';
import { compareQuotes } from './service.ts';

/** Said on every answer: the figures are live quotes and a planner preview, not an offer. */
export const QUOTE_ESTIMATE_HEADER =
  "estimate; venue quotes expire at expires_at and sliced_plan and expected_savings are the planner's preview";

export const quotesRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/quotes',
    operationId: 'compareQuotes',
    summary: 'Compare the venues for a token conversion, and preview how the planner would execute it',
    description:
      'Free and rate limited per IP. Every venue that settles on the chain is asked for the full size at once; ' +
      '`full_size` lists those that answered, best first. `sliced_plan` is the planner that executes intents, in ' +
      'preview: one extra small probe quote on the best venue, slices sized against half of ' +
      '`assumed_max_slippage_bps`; when it refuses, `planner_abort` carries the reason. An estimate only: the ' +
      '`x-purser-estimate` header says so on every answer. 502 VENUE_UNAVAILABLE when no venue answered.',
    tags: ['public utilities'],
    class: 'public',
    wallet: false,
    schema: { body: QuoteRequestSchema, response: { 200: QuoteComparisonSchema } },
    handler: async ({ deps, body, deadline }) => {
      const comparison = await compareQuotes(
        {
          db: deps.db,
          venues: deps.venues ?? [],
          registry: deps.tokenRegistry ?? buildTokenRegistry(deps.config.env),
          prices: deps.prices,
          clock: deps.clock,
          config: deps.config,
          log: deps.log,
        },
        {
          chainId: body.chain_id ?? 8453,
          sellToken: body.sell_token,
          buyToken: body.buy_token,
          sellAmount: BigInt(body.sell_amount),
        },
        deadline,
      );
      return {
        status: 200,
        body: comparison,
        headers: { 'x-purser-estimate': QUOTE_ESTIMATE_HEADER, 'cache-control': 'no-store' },
      };
    },
  }),
];
